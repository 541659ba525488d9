"""Bulk mini-batches from a GraphStore equal PyG's ``Batch.from_data_list`` exactly."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Batch, Data, InMemoryDataset
from torch_geometric.loader import DataLoader as PyGDataLoader

from graphbench.data.store.batching import batching_plan, concatenated_ranges
from graphbench.data.store.graph_store import GraphStore
from graphbench.data.store.loader import graph_loader


class SplitNodeMask:
    """A per-graph transform (as a node-level split view could use): an all-true ``{split}_mask`` and
    each node's position ``n_id`` in the whole collated dataset."""

    def __init__(self, split: str, node_ptr: torch.Tensor) -> None:
        self.split, self.node_ptr = split, node_ptr

    def __call__(self, data: Data) -> Data:
        data[f"{self.split}_mask"] = torch.ones(data.num_nodes, dtype=torch.bool)
        data.n_id = self.node_ptr[data.idx] + torch.arange(data.num_nodes)
        return data


def graph(num_nodes: int, edges: list[tuple[int, int]], label: float) -> Data:
    """A graph with integer node features 10*i + node, edge features 100*i + edge, a node-level
    2-column encoding and a graph-level label row."""
    edge_index = torch.tensor(edges, dtype=torch.long).t().reshape(2, -1)
    return Data(
        x=torch.arange(num_nodes).view(-1, 1) + int(10 * label),
        edge_index=edge_index,
        edge_attr=torch.arange(edge_index.size(1)).view(-1, 1) + int(100 * label),
        y=torch.tensor([[label, -label]]),
        pe=torch.arange(2 * num_nodes, dtype=torch.float).view(num_nodes, 2) / (label + 1),
    )


GRAPHS = [
    graph(3, [(0, 1), (1, 0), (1, 2), (2, 1)], 0.0),
    graph(2, [(0, 1), (1, 0)], 1.0),
    graph(1, [], 2.0),  # no edges
    graph(4, [(0, 3), (3, 0)], 3.0),
]


def assert_same_batch(ours: Batch, pyg: Batch) -> None:
    assert type(ours).__name__ == type(pyg).__name__ == "DataBatch"
    assert sorted(ours.keys()) == sorted(pyg.keys())
    for key in pyg.keys():
        assert ours[key].dtype == pyg[key].dtype, key
        assert torch.equal(ours[key], pyg[key]), key
    assert ours.num_graphs == pyg.num_graphs and ours.num_nodes == pyg.num_nodes
    for name in ("_slice_dict", "_inc_dict"):
        mine, theirs = getattr(ours, name), getattr(pyg, name)
        assert sorted(mine) == sorted(theirs), name
        for key in theirs:
            assert torch.equal(mine[key], torch.as_tensor(theirs[key])), (name, key)


def test_concatenated_ranges() -> None:
    got = concatenated_ranges(torch.tensor([5, 0, 9]), torch.tensor([2, 0, 3]))
    assert got.tolist() == [5, 6, 9, 10, 11]


def test_batch_values_by_hand() -> None:
    store = GraphStore.from_list(GRAPHS)
    batch = store.batch([3, 0])
    # graph 3 (4 nodes) first, then graph 0 (3 nodes) with node ids shifted by 4
    assert batch.x.view(-1).tolist() == [30, 31, 32, 33, 0, 1, 2]
    assert batch.edge_index.tolist() == [[0, 3, 4, 5, 5, 6], [3, 0, 5, 4, 6, 5]]
    assert batch.edge_attr.view(-1).tolist() == [300, 301, 0, 1, 2, 3]
    assert batch.y.tolist() == [[3.0, -3.0], [0.0, -0.0]]
    assert batch.batch.tolist() == [0, 0, 0, 0, 1, 1, 1]
    assert batch.ptr.tolist() == [0, 4, 7]
    assert batch.idx.tolist() == [3, 0]
    assert torch.equal(batch.get_example(1).edge_index, GRAPHS[0].edge_index)


@pytest.mark.parametrize("positions", [[0, 1, 2, 3], [2], [3, 2, 0], [1, 1]])
def test_equals_pyg_collate(positions: list[int]) -> None:
    store = GraphStore.from_list(GRAPHS)
    assert_same_batch(store.batch(positions), Batch.from_data_list([store[p] for p in positions]))


def test_views_map_positions_to_dataset_indices() -> None:
    view = GraphStore.from_list(GRAPHS).index_select(torch.tensor([3, 1, 2]))
    batch = view.batch([0, 2])
    assert batch.idx.tolist() == [3, 2]
    assert_same_batch(batch, Batch.from_data_list([view[0], view[2]]))
    sub = view.index_select([1, 0])  # a view of a view
    assert_same_batch(sub.batch([1, 0]), Batch.from_data_list([sub[1], sub[0]]))


def test_transforms_and_unusual_attributes_take_pyg_path() -> None:
    store = GraphStore.from_list(GRAPHS)
    view = store.index_select(torch.tensor([0, 3]))
    view.transform = SplitNodeMask("train", store.slices["x"])
    assert_same_batch(view.batch([1, 0]), Batch.from_data_list([view[1], view[0]]))
    assert "train_mask" in view.batch([0]).keys()
    with_batch_key = [Data(x=g.x, edge_index=g.edge_index, node_batch=torch.zeros(g.num_nodes, dtype=torch.long)) for g in GRAPHS]
    assert batching_plan(*InMemoryDataset.collate(with_batch_key)) is None
    no_x = [Data(edge_index=g.edge_index, num_nodes=g.num_nodes) for g in GRAPHS]
    assert batching_plan(*InMemoryDataset.collate(no_x)) is None
    assert batching_plan(*InMemoryDataset.collate(GRAPHS)) is not None


def test_loader_yields_pyg_loaders_batches_in_the_same_order() -> None:
    store = GraphStore.from_list(GRAPHS * 5)
    torch.manual_seed(7)
    ours = list(graph_loader(store, batch_size=3, shuffle=True))
    torch.manual_seed(7)
    pyg = list(PyGDataLoader(store, batch_size=3, shuffle=True))
    assert len(ours) == len(pyg) == 7
    for a, b in zip(ours, pyg):
        assert_same_batch(a, b)
