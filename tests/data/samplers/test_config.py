"""graphbench.data.samplers.config: the ``sampler`` group's node becomes its Sampler (its metadata
dropped); no node is no sampler; a target that is no Sampler is one clear error. Which data takes
which sampler is the DataModules' (tests/data/datamodules)."""

from __future__ import annotations

from typing import Any

import pytest
from omegaconf import OmegaConf

from graphbench.data.samplers import FullBatch, NeighborSampling
from graphbench.data.samplers.config import build_sampler
from graphbench.run.errors import ConfigError

NEIGHBOR = {"_target_": "graphbench.data.samplers.NeighborSampling", "name": "neighbor", "num_neighbors": [2], "batch_size": 8}
FULL = {"_target_": "graphbench.data.samplers.FullBatch", "name": "full"}


def test_the_node_builds_its_sampler_without_its_metadata() -> None:
    sampler = build_sampler(OmegaConf.create(NEIGHBOR))
    assert isinstance(sampler, NeighborSampling)
    assert (sampler.num_neighbors, sampler.batch_size) == ([2], 8)
    full = build_sampler(OmegaConf.create({**FULL, "batch_size": 4}))
    assert isinstance(full, FullBatch) and full.batch_size == 4


@pytest.mark.parametrize("node", [None, {"name": "full"}])
def test_no_node_or_no_target_is_no_sampler(node: dict[str, Any] | None) -> None:
    assert build_sampler(None if node is None else OmegaConf.create(node)) is None


def test_a_target_that_is_no_sampler_is_one_clear_error() -> None:
    node = {"_target_": "graphbench.data.store.sharding.Shard", "name": "odd", "rank": 0, "world_size": 1}
    with pytest.raises(ConfigError, match=r"^sampler._target_ must build a graphbench Sampler, got Shard$"):
        build_sampler(OmegaConf.create(node))
