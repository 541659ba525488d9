"""Encodings of a whole GraphStore: the collated path equals the per-graph one bit for bit."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Data
from torch_geometric.transforms import Compose, Constant

from graphbench.data.store.encodings import collated_graphs, precompute_store, separated_graphs
from graphbench.data.store.graph_store import GraphStore
from graphbench.transforms.lap_pe import LapPE
from graphbench.transforms.precompute import PECompose, precompute
from graphbench.transforms.rwse import RWSE
from tests.transforms.test_precompute import mixed_graphs


def featured(weighted: bool = False) -> list[Data]:
    """``mixed_graphs`` with node features, edge features and labels (as a dataset store holds them)."""
    g = torch.Generator().manual_seed(2)
    graphs = []
    for data in mixed_graphs():
        n, e = data.num_nodes, data.edge_index.size(1)
        graph = Data(
            x=torch.rand(n, 3, generator=g),
            edge_index=data.edge_index,
            edge_attr=torch.rand(e, 2, generator=g),
            y=torch.rand(1, 4, generator=g),
        )
        if weighted:
            graph.edge_weight = torch.rand(e, generator=g)
        graphs.append(graph)
    return graphs


def assert_same_store(a: GraphStore, b: GraphStore) -> None:
    assert sorted(a.collated.keys()) == sorted(b.collated.keys())
    for key in a.collated.keys():
        torch.testing.assert_close(a.collated[key], b.collated[key], rtol=0, atol=0, equal_nan=True, msg=key)
        assert torch.equal(a.slices[key], b.slices[key]), key


def per_graph_store(store: GraphStore, transform) -> GraphStore:
    return GraphStore.from_list(precompute(separated_graphs(store), transform))


@pytest.mark.parametrize("weighted", [False, True])
def test_rwse_on_the_store_equals_per_graph_without_separating(weighted, monkeypatch):
    store = GraphStore.from_list(featured(weighted))
    expected = per_graph_store(store, RWSE(k=6))
    monkeypatch.setattr(GraphStore, "get", lambda *_: pytest.fail("a graph was separated"))
    encoded = precompute_store(store, RWSE(k=6))
    assert_same_store(encoded, expected)
    assert "rwse" not in store.collated  # the input store is unchanged


def test_lappe_on_the_store_equals_per_graph_in_worker_processes(monkeypatch):
    store = GraphStore.from_list(featured(weighted=True) * 3)
    expected = per_graph_store(store, LapPE(k=4))
    monkeypatch.setattr(LapPE, "MIN_GRAPHS_TO_FORK", 1)
    encoded = store.with_node_attributes(LapPE(k=4).transform_collated(collated_graphs(store), num_workers=2))
    assert_same_store(encoded, expected)


def test_compositions_mix_the_collated_and_per_graph_paths():
    store = GraphStore.from_list(featured())
    for transform in (PECompose([LapPE(k=3), RWSE(k=4)]), Compose([RWSE(k=4), Constant(value=1.0), LapPE(k=2)])):
        assert_same_store(precompute_store(store, transform), per_graph_store(store, transform))
    assert precompute_store(store, None) is store


def test_layouts_the_collated_path_does_not_cover_fall_back_to_graphs():
    # explicit num_nodes, no x: node ranges are not x's slices
    graphs = [Data(edge_index=g.edge_index, num_nodes=g.num_nodes) for g in mixed_graphs()]
    store = GraphStore.from_list(graphs)
    assert collated_graphs(store) is None
    assert collated_graphs(GraphStore.from_list(featured()).index_select([0, 2])) is None  # a split view
    encoded = precompute_store(store, RWSE(k=5))
    for data, graph in zip(graphs, separated_graphs(encoded)):
        assert torch.equal(graph.rwse, RWSE(k=5)(data).rwse)


def test_collated_graphs_reads_the_store_layout():
    graphs = featured(weighted=True)[:3]
    collated = collated_graphs(GraphStore.from_list(graphs))
    assert collated is not None
    counts = [g.num_nodes for g in graphs]
    sizes = [g.edge_index.size(1) for g in graphs]
    assert collated.node_ptr.tolist() == [0, *torch.tensor(counts).cumsum(0).tolist()]
    assert collated.edge_ptr.tolist() == [0, *torch.tensor(sizes).cumsum(0).tolist()]
    assert torch.equal(collated.edge_index, torch.cat([g.edge_index for g in graphs], 1))  # graph-local numbering
    assert torch.equal(collated.edge_weight, torch.cat([g.edge_weight for g in graphs]))
