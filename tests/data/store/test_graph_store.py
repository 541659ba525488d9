"""``GraphStore``: graphs carry their index in the whole dataset, split views share the storage, node attributes
are added without changing the store, and the cache state round-trips (batching: ``test_batching.py``)."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Data

from graphbench.data.store.collate import collate
from graphbench.data.store.graph_store import GraphStore, separate_all

EDGES = [torch.tensor([[0, 1], [1, 2]]), torch.tensor([[1], [0]]), torch.tensor([[0], [0]])]
X = [torch.tensor([[1.0], [2.0], [3.0]]), torch.tensor([[4.0], [5.0]]), torch.tensor([[6.0]])]


def store() -> GraphStore:
    return GraphStore(*collate(EDGES, {"x": X}, graph={"y": torch.tensor([10, 11, 12])}))


def test_graphs_are_separated_with_local_ids_and_carry_their_index() -> None:
    graph = store()[1]
    assert graph.x.flatten().tolist() == [4.0, 5.0] and graph.edge_index.tolist() == [[1], [0]]
    assert (graph.y.tolist(), graph.idx) == ([11], 1)


def test_a_split_view_maps_its_positions_to_the_whole_datasets_indices() -> None:
    view = store().index_select(torch.tensor([2, 0]))
    assert len(view) == 2 and [view[p].idx for p in range(2)] == [2, 0]
    assert view.graph_ids([1, 0, 1]).tolist() == [0, 2, 0]
    assert store().graph_ids([1, 2]).tolist() == [1, 2]
    assert store()[1:3].graph_ids([1, 0]).tolist() == [2, 1]  # a slice: a range of indices
    assert store()[::2].graph_ids([1, 0]).tolist() == [2, 0]
    batch = view.batch([0, 1])
    assert batch.x.flatten().tolist() == [6.0, 1.0, 2.0, 3.0]
    assert batch.edge_index.tolist() == [[0, 1, 2], [0, 2, 3]]  # offset in the batch


def test_node_attributes_are_added_to_a_new_store() -> None:
    original = store()
    extended = original.with_node_attributes({"pe": torch.arange(6.0).unsqueeze(1)})
    assert extended[1].pe.flatten().tolist() == [3.0, 4.0] and "pe" not in original[1]
    with pytest.raises(ValueError, match=r"^node attribute 'pe' has 5 rows for 6 nodes$"):
        original.with_node_attributes({"pe": torch.zeros(5, 1)})


def test_the_cache_state_round_trips() -> None:
    again = GraphStore.from_state(store().state())
    assert len(again) == 3 and torch.equal(again[0].x, X[0]) and again[2].y.tolist() == [12]


def test_separate_all_splits_every_attribute_and_leaves_explicit_node_counts_to_pyg() -> None:
    data, slices = collate(EDGES, {"x": X})
    graphs = separate_all(data, slices)
    assert graphs is not None and [g.num_nodes for g in graphs] == [3, 2, 1]
    assert [g.edge_index.size(1) for g in graphs] == [2, 1, 1]
    assert separate_all(Data(x=data.x, edge_index=data.edge_index, num_nodes=6), slices) is None
