"""The many-graph layout: ``batch_size`` graphs per batch (checked once, here), node labelling per
split at node level and nothing added at graph and link level, and the layout a node- or link-level
DataModule of many graphs gets."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from torch_geometric.data import Data

from graphbench.data.datamodules.many_graphs import ManyGraphs, many_graphs_layout
from graphbench.data.datamodules.schema import ManyGraphsConfig
from graphbench.data.samplers import ClusterGCN, FullBatch
from graphbench.data.store.graph_store import GraphStore
from graphbench.data.store.padding import Bucket
from graphbench.vocabulary.errors import ConfigError


def three_paths() -> SimpleNamespace:
    """What the layout reads of its DataModule: paths of 2, 3 and 4 nodes, split 0+1 / - / 2."""
    graphs = [
        Data(x=torch.full((n, 1), float(n)), edge_index=torch.stack([torch.arange(n - 1), torch.arange(1, n)])) for n in (2, 3, 4)
    ]
    splits = {"train": torch.tensor([0, 1]), "val": torch.tensor([], dtype=torch.long), "test": torch.tensor([2])}
    return SimpleNamespace(dataset=GraphStore.from_list(graphs), splits=splits, name="paths", num_workers=0, shard=None)


@pytest.mark.parametrize("bad", [0, -3, True, 2.0, "8", None])
def test_batch_size_is_a_positive_number_of_graphs(bad: object) -> None:
    with pytest.raises(ConfigError, match=r"^batch_size=.* \(graphs per batch\) must be a positive integer$"):
        ManyGraphs(batch_size=bad)  # type: ignore[arg-type]


def test_nodes_are_labelled_per_split_only_at_node_level() -> None:
    dm = three_paths()
    plain = ManyGraphs(batch_size=2).split_dataset(dm, "test")  # type: ignore[arg-type]
    assert len(plain) == 1 and "n_id" not in plain[0] and "test_mask" not in plain[0]
    test = ManyGraphs(batch_size=2, label_nodes=True).split_dataset(dm, "test")  # type: ignore[arg-type]
    assert test[0].n_id.tolist() == [5, 6, 7, 8] and test[0].test_mask.tolist() == [True] * 4  # after 2 + 3 nodes


def test_loaders_batch_the_splits_graphs() -> None:
    dm = three_paths()
    layout = ManyGraphs(batch_size=2, label_nodes=True)
    dm.split_dataset = lambda split: layout.split_dataset(dm, split)  # type: ignore[arg-type]
    (train,) = list(layout.loader(dm, "train", shuffle=False))  # type: ignore[arg-type]
    assert train.num_graphs == 2 and train.n_id.tolist() == [0, 1, 2, 3, 4]


def test_many_graphs_take_the_full_sampler_only_and_batch_on_the_device_at_graph_level() -> None:
    assert many_graphs_layout("pattern", ManyGraphsConfig(batch_size=4), FullBatch(), level="node").label_nodes
    with pytest.raises(ConfigError, match=r"^sampler=cluster_gcn applies to one-graph datasets; tsp is split by graphs"):
        many_graphs_layout("tsp", ManyGraphsConfig(batch_size=4), ClusterGCN(num_parts=2, parts_per_batch=1), level="link")
    with pytest.raises(ConfigError, match=r"^sampler=cluster_gcn applies to one-graph datasets; zinc is split by graphs"):
        many_graphs_layout("zinc", ManyGraphsConfig(batch_size=4), ClusterGCN(num_parts=2, parts_per_batch=1), level="graph")
    with pytest.raises(ConfigError, match=r"^batch_on_device=true gathers graph-level mini-batches on the device; tsp is not"):
        many_graphs_layout("tsp", ManyGraphsConfig(batch_size=4, batch_on_device=True), None, level="link")
    on_device = many_graphs_layout("zinc", ManyGraphsConfig(batch_size=4, batch_on_device=True), None, level="graph")
    assert on_device.batch_on_device and not on_device.label_nodes and on_device.pad_to == "none"
    with pytest.raises(ConfigError, match=r"^batch_size is missing: zinc has many graphs; set it \(graphs per batch\)$"):
        many_graphs_layout("zinc", ManyGraphsConfig(), None, level="graph")


def test_pad_to_is_one_of_its_choices() -> None:
    assert ManyGraphs(batch_size=2, pad_to="buckets").pad_to == "buckets"
    with pytest.raises(ConfigError, match=r"^pad_to='fixed' is not one of \['none', 'buckets'\]$"):
        ManyGraphs(batch_size=2, pad_to="fixed")


def test_buckets_pad_graph_level_batches_only() -> None:
    with pytest.raises(ConfigError, match=r"^pad_to='buckets' pads the mini-batches of graph-level datasets; pattern is"):
        many_graphs_layout("pattern", ManyGraphsConfig(batch_size=4, pad_to="buckets"), None, level="node")


def test_buckets_are_chosen_at_setup_and_every_loader_pads_to_them() -> None:
    dm = three_paths()
    layout = ManyGraphs(batch_size=2, pad_to="buckets")
    layout.setup(dm)  # type: ignore[arg-type]
    assert layout.buckets is not None and layout.buckets.graphs == 3
    dm.split_dataset = lambda split: layout.split_dataset(dm, split)  # type: ignore[arg-type]
    (train,) = list(layout.loader(dm, "train", shuffle=False))  # type: ignore[arg-type]
    (test,) = list(layout.loader(dm, "test", shuffle=False))  # type: ignore[arg-type]
    # the training batch (paths of 2 and 3 nodes: 5 + 1 nodes, 3 edges) and the worst case (3 and 4 nodes: 7 + 1
    # nodes, 5 edges), each rounded up to a multiple of 8: one bucket
    assert layout.buckets.sizes == (Bucket(8, 8),)
    assert train.num_graphs == test.num_graphs == 3 and train.num_real_graphs == 2 and test.num_real_graphs == 1
    assert int(train.node_mask.sum()) == 5 and int(test.node_mask.sum()) == 4
