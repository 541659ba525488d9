"""The one-graph layouts: node and link data hand their sampler the same context (workers, the
dataset's cache, this process's shard and the shared seed), one-graph link training takes
``sampler.batch_size`` positive pairs per step, and node-level full batch takes no batch size."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from torch_geometric.data import Data

from graphbench.build.data import datamodule_from_keys
from graphbench.data.datamodules import LinkLevelDataModule, NodeLevelDataModule
from graphbench.data.datamodules.one_graph import OneGraphLinks, OneGraphNodes
from graphbench.data.info import DataFacts, FeatureSpec
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.samplers import ClusterGCN, FullBatch, NeighborSampling, Sampler
from graphbench.data.sources.base import OneGraphNodeSource, Source
from graphbench.data.store.graph_store import GraphStore
from graphbench.data.store.sharding import Shard
from graphbench.vocabulary.errors import ConfigError
from graphbench.vocabulary.splits import SPLITS

COMMON: dict[str, Any] = dict(task_type="binary", metric="accuracy", higher_is_better=True)
RING = torch.stack([torch.arange(6), (torch.arange(6) + 1) % 6])


class Hexagon(OneGraphNodeSource):
    """A ring of 6 nodes: train 0-3, val 4, test 5."""

    fixed_split = "shipped"

    def read_graph(self, raw: RawRoot) -> Data:
        train, val, test = (torch.tensor([n in nodes for n in range(6)]) for nodes in ((0, 1, 2, 3), (4,), (5,)))
        return Data(x=torch.eye(6), edge_index=RING, y=torch.arange(6) % 2, train_mask=train, val_mask=val, test_mask=test)


class RingPairs(Source):
    """One ring of 6 nodes whose edges are split: 5 positive training pairs (the message-passing graph), one positive and one
    negative pair for validation and for test."""

    level = "link"
    one_graph = True

    def facts(self, store: GraphStore | None = None) -> DataFacts:
        return DataFacts(num_outputs=1, node_features=FeatureSpec("dense", dim=6), edge_features=None)

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, torch.Tensor]]:
        pair = torch.tensor([[0], [3]])
        graph = Data(
            x=torch.eye(6),
            edge_index=RING[:, :5],  # the message-passing graph: the training edges
            train_pos=RING[:, :5],
            val_pos=RING[:, 5:],
            val_neg=pair,
            test_pos=RING[:, 5:],
            test_neg=pair.flip(0),
            val_pos_attr=torch.zeros(1, 0),
            num_nodes=6,
        )
        one = torch.zeros(1, dtype=torch.long)
        return GraphStore.from_list([graph]), {split: one for split in SPLITS}


def link_dm(tmp_path: Path, sampler: Sampler | None = None, **keys: Any) -> LinkLevelDataModule:
    keys = dict(name="ring", data_dir=tmp_path, cache_dir=tmp_path / "cache", **COMMON, **keys)
    return datamodule_from_keys(LinkLevelDataModule, RingPairs(), keys, sampler=sampler)


def node_dm(tmp_path: Path, sampler: Sampler | None = None, **keys: Any) -> NodeLevelDataModule:
    keys = dict(name="hexagon", data_dir=tmp_path, cache_dir=tmp_path / "cache", **COMMON, **keys)
    return datamodule_from_keys(NodeLevelDataModule, Hexagon(), keys, sampler=sampler)


def test_node_and_link_samplers_get_the_same_context_with_shard_and_seed(tmp_path: Path) -> None:
    torch.manual_seed(11)
    for dm in (node_dm(tmp_path), link_dm(tmp_path)):
        dm.trainer = SimpleNamespace(global_rank=1, world_size=2)  # type: ignore[assignment]  # what shard reads
        layout = dm.layout
        assert isinstance(layout, (OneGraphNodes, OneGraphLinks))
        context = layout.sampler_context(dm)
        assert (context.num_workers, context.shard, context.seed) == (0, Shard(1, 2), 11), type(dm).__name__
        assert context.cache("parts", (3,), lambda: [1, 2]) == [1, 2]  # built once, then read from the dataset's cache
        assert context.cache("parts", (3,), lambda: [9]) == [1, 2]


def test_an_argument_its_sampler_refuses_at_loading_is_named_as_the_sampler_key(tmp_path: Path) -> None:
    dm = node_dm(tmp_path, sampler=ClusterGCN(num_parts=7, parts_per_batch=1))
    dm.setup("fit")
    with pytest.raises(ConfigError, match=r"^sampler.num_parts=7 exceeds the graph's 6 nodes$"):
        dm.train_dataloader()


def test_link_training_takes_the_samplers_pairs_per_step(tmp_path: Path) -> None:
    dm = link_dm(tmp_path, sampler=FullBatch(batch_size=2))
    dm.setup()
    train = list(dm.train_dataloader())
    assert [b.edge_label_index.size(1) for b in train] == [2, 2, 1]  # 5 positive training pairs, 2 a step
    assert all(b.edge_index.size(1) == 5 for b in train)  # each with the whole training graph
    (val,) = list(dm.val_dataloader())  # eval_batch_size null: every labelled pair at once
    assert val.edge_label.tolist() == [1.0, 0.0] and val.edge_label_index.tolist() == [[5, 0], [0, 3]]
    every = link_dm(tmp_path, sampler=FullBatch())
    every.setup()
    assert [b.edge_label_index.size(1) for b in every.train_dataloader()] == [5]  # null: all pairs in one step


def test_one_graph_refuses_a_graph_batch_size_and_node_full_batch_refuses_pairs(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^dataset.batch_size \(graphs per batch\) does not apply to ring, which is one graph"):
        link_dm(tmp_path, batch_size=64)
    with pytest.raises(
        ConfigError, match=r"^sampler.batch_size=8 \(positive pairs per step\) applies to one-graph link datasets"
    ):
        node_dm(tmp_path, sampler=FullBatch(batch_size=8))
    with pytest.raises(ConfigError, match=r"^dataset.batch_on_device=true applies to graph-level datasets"):
        node_dm(tmp_path, batch_on_device=True)
    assert node_dm(tmp_path, sampler=NeighborSampling(num_neighbors=[2], batch_size=3)).batch_size is None


def test_node_loaders_yield_the_whole_graph_with_its_split(tmp_path: Path) -> None:
    dm = node_dm(tmp_path)
    dm.setup()
    (train,) = list(dm.train_dataloader())
    assert train.num_nodes == 6 and train.train_mask.tolist() == [True] * 4 + [False] * 2
    assert dm.graph is not None and dm.full_batch is not None and dm.split == "shipped"
