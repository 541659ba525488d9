"""graphbench.data.datamodules.node_level: NodeLevelDataModule on both layouts of source. The options of
one-graph datasets are refused for many-graph ones and ``dataset.batch_size`` (graphs per batch) for
one-graph ones, a one-graph dataset defaults to its shipped split, its split can be replaced by node
masks, and the nodes of many graphs are masked and numbered per split."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch_geometric.data import Batch, Data

from graphbench.build.data import datamodule_from_keys
from graphbench.data.datamodules import NodeLevelDataModule
from graphbench.data.datamodules.schema import DatasetConfig, ManyGraphsConfig, OneGraphNodesConfig
from graphbench.data.info import DataFacts, FeatureSpec
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.samplers import FullBatch, NeighborSampling, Sampler
from graphbench.data.sources.base import OneGraphNodeSource, Source
from graphbench.data.store.collate import collate
from graphbench.data.store.graph_store import GraphStore
from graphbench.vocabulary.errors import ConfigError

COMMON: dict[str, Any] = dict(task_type="multiclass", metric="accuracy", higher_is_better=True)
#: graphs per batch, for the sources of many graphs
MANY: dict[str, Any] = dict(batch_size=2)


class Paths(Source):
    """Four labelled paths of 2, 3, 4 and 5 nodes: train = 0 and 1, val = 2, test = 3."""

    level = "node"

    def facts(self, store: GraphStore | None = None) -> DataFacts:
        return DataFacts(num_outputs=2, node_features=FeatureSpec("dense", dim=1), edge_features=None)

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, torch.Tensor]]:
        sizes = (2, 3, 4, 5)
        edge_index = [torch.stack([torch.arange(n - 1), torch.arange(1, n)]) for n in sizes]
        x = [torch.full((n, 1), float(n)) for n in sizes]
        y = [torch.arange(n) % 2 for n in sizes]
        data, slices = collate(edge_index, {"x": x, "y": y})
        return GraphStore(data, slices), {"train": torch.tensor([0, 1]), "val": torch.tensor([2]), "test": torch.tensor([3])}


class Triangle(OneGraphNodeSource):
    fixed_split = "shipped"

    def read_graph(self, raw: RawRoot) -> Data:
        mask = torch.tensor([True, False, False])
        return Data(
            x=torch.eye(3),
            edge_index=torch.tensor([[0, 1, 2], [1, 2, 0]]),
            y=torch.tensor([0, 1, 1]),
            train_mask=mask,
            val_mask=mask.roll(1),
            test_mask=mask.roll(2),
        )


def node_dm(source: Source, tmp_path: Path, sampler: Sampler | None = None, **keys: Any) -> NodeLevelDataModule:
    keys = dict(name="toy", data_dir=tmp_path, cache_dir=tmp_path / "cache", **COMMON, **keys)
    return datamodule_from_keys(NodeLevelDataModule, source, keys, sampler=sampler)


def test_nodes_of_many_graphs_are_masked_and_numbered_per_split(tmp_path: Path) -> None:
    dm = node_dm(Paths(), tmp_path, split="by graph", **MANY)
    dm.setup()
    (train,) = list(dm.train_dataloader())
    assert train.train_mask.tolist() == [True] * 5 and "val_mask" not in train and sorted(train.n_id.tolist()) == [0, 1, 2, 3, 4]
    (test,) = list(dm.test_dataloader())
    assert test.test_mask.all() and test.n_id.tolist() == [9, 10, 11, 12, 13]
    view = dm.split_dataset("val")
    assert torch.equal(view.batch([0]).n_id, Batch.from_data_list([view[0]]).n_id)  # bulk batching == PyG's
    assert "n_id" not in dm.dataset.collated  # the store itself is untouched


@pytest.mark.parametrize(
    "option", [{"split_index": 0}, {"split_seed": 1}, {"split_fractions": [0.5, 0.25, 0.25]}, {"normalize_features": True}]
)
def test_one_graph_options_are_refused_for_many_graphs(tmp_path: Path, option: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match=f"dataset.{next(iter(option))} applies to one-graph"):
        node_dm(Paths(), tmp_path, **MANY, **option)


def test_one_graph_defaults_to_the_shipped_split(tmp_path: Path) -> None:
    dm = node_dm(Triangle(), tmp_path)
    assert dm.split == "shipped"
    dm.setup()
    assert dm.graph is not None and dm.graph.val_mask.tolist() == [False, True, False]
    assert dm.info.num_outputs == 2 and dm.info.node_features.dim == 3
    with pytest.raises(ConfigError, match=r"valid: \['shipped', 'random', 'igb'\]"):
        node_dm(Triangle(), tmp_path, split="public")


class Ring(OneGraphNodeSource):
    """A ring of 20 nodes whose shipped split is all-train."""

    fixed_split = "shipped"

    def read_graph(self, raw: RawRoot) -> Data:
        n = 20
        everything = torch.ones(n, dtype=torch.bool)
        return Data(
            x=torch.eye(n),
            edge_index=torch.stack([torch.arange(n), (torch.arange(n) + 1) % n]),
            y=torch.arange(n) % 2,
            train_mask=everything,
            val_mask=~everything,
            test_mask=~everything,
        )


def test_igb_split_replaces_the_shipped_one_with_ten_ten_eighty(tmp_path: Path) -> None:
    dm = node_dm(Ring(), tmp_path, split="igb", split_seed=1)
    dm.setup()
    assert dm.graph is not None
    counts = [int(dm.graph[f"{s}_mask"].sum()) for s in ("train", "val", "test")]
    assert counts == [2, 2, 16]
    assert (dm.graph.train_mask.int() + dm.graph.val_mask.int() + dm.graph.test_mask.int()).tolist() == [1] * 20


def test_batches_on_the_device_are_refused_at_node_level(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"^dataset.batch_on_device=true gathers graph-level mini-batches .* set batch_on_device=false$"
    ):
        node_dm(Paths(), tmp_path, batch_on_device=True, **MANY)


def test_a_graph_batch_size_is_refused_for_one_graph_and_required_for_many(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"^dataset.batch_size \(graphs per batch\) does not apply to toy, which is one graph: remove"
    ):
        node_dm(Triangle(), tmp_path, batch_size=1)
    with pytest.raises(ConfigError, match=r"^dataset.batch_size is missing: toy has many graphs; set it \(graphs per batch\)$"):
        node_dm(Paths(), tmp_path)
    with pytest.raises(ConfigError, match=r"^dataset.batch_size=0 \(graphs per batch\) must be a positive integer$"):
        node_dm(Paths(), tmp_path, batch_size=0)


def test_a_layout_given_in_python_for_the_other_kind_of_data_is_refused_unless_it_is_its_defaults(tmp_path: Path) -> None:
    dataset = DatasetConfig(name="toy", data_dir=tmp_path, cache_dir=tmp_path / "cache", **COMMON)
    with pytest.raises(ConfigError, match=r"^dataset.batch_size \(graphs per batch\) does not apply to toy, which is one graph"):
        NodeLevelDataModule(source=Triangle(), dataset=dataset, layout=ManyGraphsConfig(batch_size=1))
    with pytest.raises(ConfigError, match=r"^dataset.normalize_features applies to one-graph \(transductive\) datasets; toy is"):
        NodeLevelDataModule(source=Paths(), dataset=dataset, layout=OneGraphNodesConfig(normalize_features=True))
    assert NodeLevelDataModule(source=Triangle(), dataset=dataset, layout=ManyGraphsConfig()).split == "shipped"


def test_many_graphs_take_the_full_sampler_without_a_batch_size(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^sampler=neighbor applies to one-graph datasets; toy is split by graphs"):
        node_dm(Paths(), tmp_path, sampler=NeighborSampling(num_neighbors=[2], batch_size=4), **MANY)
    dm = node_dm(Paths(), tmp_path, sampler=FullBatch(), **MANY)
    assert dm.batch_size == 2 and dm.graph is None and dm.sampler.is_full_batch


def test_split_masks_replace_the_split_of_the_one_graph(tmp_path: Path) -> None:
    dm = node_dm(Triangle(), tmp_path)
    dm.setup()
    train, val, test = torch.tensor([True, True, False]), torch.tensor([False, False, True]), torch.zeros(3, dtype=torch.bool)
    dm.use_split_masks(train, val, test)
    (batch,) = list(dm.train_dataloader())
    assert batch.train_mask.tolist() == [True, True, False] and batch.val_mask.tolist() == [False, False, True]
    assert dm.full_batch is not None and dm.full_batch.test_mask.tolist() == [False, False, False]
    with pytest.raises(ConfigError, match=r"^toy: the val mask must be a boolean vector of 3 nodes, got \(2,\) torch.bool$"):
        dm.use_split_masks(train, torch.ones(2, dtype=torch.bool), test)


def test_split_masks_need_one_graph(tmp_path: Path) -> None:
    dm = node_dm(Paths(), tmp_path, **MANY)
    assert dm.full_batch is None and isinstance(dm.sampler, FullBatch)
    mask = torch.ones(3, dtype=torch.bool)
    with pytest.raises(ConfigError, match=r"^toy: use_split_masks needs a set-up one-graph \(transductive\) dataset$"):
        dm.use_split_masks(mask, mask, mask)
