"""graphbench.data.samplers.config: the built sampler reaches the DataModules that take one, and only
``sampler=full`` (without a batch size) reaches the others."""

from __future__ import annotations

from typing import Any

import pytest
from omegaconf import DictConfig, OmegaConf

from graphbench.data.samplers import FullBatch, NeighborSampling
from graphbench.data.samplers.config import sampler_argument
from graphbench.run.errors import ConfigError

DATAMODULES = "graphbench.data.datamodules"
NEIGHBOR = {"_target_": "graphbench.data.samplers.NeighborSampling", "name": "neighbor", "num_neighbors": [2], "batch_size": 8}
FULL = {"_target_": "graphbench.data.samplers.FullBatch", "name": "full"}


def config(level: str, sampler: dict[str, Any] | None) -> DictConfig:
    dataset = {"_target_": f"{DATAMODULES}.{level}LevelDataModule", "name": "toy"}
    return OmegaConf.create({"dataset": dataset, "sampler": sampler})


@pytest.mark.parametrize("level", ["Node", "Link"])
def test_one_graph_levels_get_the_built_sampler_without_its_metadata(level: str) -> None:
    sampler = sampler_argument(config(level, NEIGHBOR))["sampler"]
    assert isinstance(sampler, NeighborSampling)
    assert (sampler.num_neighbors, sampler.batch_size) == ([2], 8)
    assert isinstance(sampler_argument(config(level, {**FULL, "batch_size": 4}))["sampler"], FullBatch)


def test_graph_level_takes_no_sampler_argument_but_accepts_full() -> None:
    assert sampler_argument(config("Graph", FULL)) == {}


def test_no_sampler_node_is_no_argument() -> None:
    assert sampler_argument(config("Node", None)) == {}
    assert sampler_argument(OmegaConf.create({"dataset": {"name": "toy"}})) == {}


@pytest.mark.parametrize(("sampler", "what"), [(NEIGHBOR, "sampler=neighbor"), ({**FULL, "batch_size": 4}, "sampler.batch_size")])
def test_a_sampler_for_graph_level_data_is_one_clear_error(sampler: dict[str, Any], what: str) -> None:
    with pytest.raises(
        ConfigError,
        match=rf"^{what} applies to one-graph node- and link-level datasets; dataset 'toy' is graph-level .* use sampler=full$",
    ):
        sampler_argument(config("Graph", sampler))


def test_a_target_that_is_no_sampler_is_one_clear_error() -> None:
    node = {"_target_": "graphbench.data.store.sharding.Shard", "name": "odd", "rank": 0, "world_size": 1}
    with pytest.raises(ConfigError, match=r"^sampler._target_ must build a graphbench Sampler, got Shard$"):
        sampler_argument(config("Node", node))
