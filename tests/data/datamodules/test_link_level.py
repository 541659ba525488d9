"""graphbench.data.datamodules.link_level: LinkLevelDataModule on both layouts of source. The options of
one-graph link datasets are refused for pairs in many graphs, which take the full sampler only; a one-graph
dataset exposes its message-passing graph and the pairs of each split once set up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from graphbench.build.data import datamodule_from_keys
from graphbench.data.datamodules import LinkLevelDataModule
from graphbench.data.datamodules.schema import DatasetConfig
from graphbench.data.samplers import FullBatch, Sampler
from graphbench.vocabulary.errors import ConfigError
from tests.data.datamodules.test_node_level import COMMON, MANY, Paths
from tests.data.datamodules.test_one_graph import RING, RingPairs


class PairsInGraphs(Paths):
    """The four labelled paths of :class:`Paths`, as link-level data."""

    level = "link"


def many_dm(tmp_path: Path, sampler: Sampler | None = None, **keys: Any) -> LinkLevelDataModule:
    keys = dict(name="toy", data_dir=tmp_path, cache_dir=tmp_path, **COMMON, **keys)
    return datamodule_from_keys(LinkLevelDataModule, PairsInGraphs(), keys, sampler=sampler)


@pytest.mark.parametrize("option", [{"eval_batch_size": 8}, {"use_val_edges_as_input": True}])
def test_one_graph_link_options_are_refused_for_many_graphs(tmp_path: Path, option: dict[str, Any]) -> None:
    key = next(iter(option))
    with pytest.raises(
        ConfigError, match=rf"^dataset.{key} applies to one-graph link datasets; toy has its pairs in many graphs$"
    ):
        many_dm(tmp_path, **MANY, **option)


def test_many_graphs_take_the_full_sampler_without_a_batch_size(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^sampler.batch_size applies to one-graph datasets"):
        many_dm(tmp_path, sampler=FullBatch(batch_size=8), **MANY)
    dm = many_dm(tmp_path, use_val_edges_as_input=False, **MANY)
    assert dm.batch_size == 2 and isinstance(dm.sampler, FullBatch)
    assert dm.graph is None and dm.split_edges == {}


def test_one_graph_exposes_its_graph_and_split_pairs_once_set_up(tmp_path: Path) -> None:
    sampler = FullBatch(batch_size=2)
    dataset = DatasetConfig(name="ring", data_dir=tmp_path, cache_dir=tmp_path / "cache", **COMMON)
    dm = LinkLevelDataModule(source=RingPairs(), dataset=dataset, sampler=sampler)
    assert dm.batch_size is None and dm.sampler is sampler and dm.graph is None
    dm.setup()
    assert dm.graph is not None and torch.equal(dm.graph.edge_index, RING[:, :5])
    edges = dm.split_edges
    assert torch.equal(edges["train_pos"], RING[:, :5])
    assert edges["val_pos"].tolist() == [[5], [0]] and edges["val_neg"].tolist() == [[0], [3]]
    assert edges["test_neg"].tolist() == [[3], [0]]
