"""ClusterGCN: METIS parts through pymetis, batches of parts with the edges between them."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Data
from torch_geometric.utils import subgraph

from graphbench.data.samplers import ClusterGCN, SamplerContext, metis_parts, no_cache
from graphbench.vocabulary.errors import ArgumentError


def two_cliques() -> Data:
    """Two 4-cliques {0..3} and {4..7} joined by the edge 3 - 4."""
    pairs = [(i, j) for block in (range(4), range(4, 8)) for i in block for j in block if i != j] + [(3, 4), (4, 3)]
    edge_index = torch.tensor(pairs).t()
    train = torch.tensor([True, False] * 4)
    return Data(x=torch.arange(8.0).view(-1, 1), y=torch.arange(8) % 2, edge_index=edge_index, train_mask=train, num_nodes=8)


def ring(num_nodes: int = 60) -> Data:
    source = torch.arange(num_nodes)
    edge_index = torch.stack([source, (source + 1) % num_nodes])
    edge_index = torch.cat([edge_index, edge_index.flip(0), torch.stack([source, (source + 7) % num_nodes])], dim=1)
    return Data(x=source.float().view(-1, 1), edge_index=edge_index, train_mask=torch.ones(num_nodes, dtype=torch.bool))


def test_metis_splits_two_cliques_at_their_bridge() -> None:
    parts = metis_parts(two_cliques().edge_index, 8, 2)
    assert parts[:4].unique().numel() == 1 and parts[4:].unique().numel() == 1
    assert parts[0] != parts[4]


def test_parts_cover_every_node_exactly_once_and_are_deterministic() -> None:
    graph = ring()
    parts = metis_parts(graph.edge_index, graph.num_nodes, 6, seed=0)
    assert parts.shape == (60,) and sorted(parts.unique().tolist()) == list(range(6))
    assert torch.equal(parts, metis_parts(graph.edge_index, graph.num_nodes, 6, seed=0))
    torch.manual_seed(0)
    loader = ClusterGCN(num_parts=6, parts_per_batch=4).train_loader(graph, SamplerContext(0, no_cache))
    seen = torch.cat([batch.n_id for batch in loader])
    assert sorted(seen.tolist()) == list(range(60))  # an epoch covers every node exactly once


def test_batches_hold_the_induced_subgraph_with_edges_between_parts() -> None:
    graph = ring()
    torch.manual_seed(1)
    for batch in ClusterGCN(num_parts=6, parts_per_batch=2).train_loader(graph, SamplerContext(0, no_cache)):
        expected, _ = subgraph(batch.n_id, graph.edge_index, relabel_nodes=False, num_nodes=graph.num_nodes)
        got = batch.n_id[batch.edge_index]
        assert sorted(map(tuple, got.t().tolist())) == sorted(map(tuple, expected.t().tolist()))
        assert torch.equal(batch.x.view(-1).long(), batch.n_id)  # node attributes travel with the nodes


def test_same_seed_same_batches() -> None:
    graph = ring()

    def epoch(seed: int) -> list[list[int]]:
        torch.manual_seed(seed)
        loader = ClusterGCN(num_parts=6, parts_per_batch=2).train_loader(graph, SamplerContext(0, no_cache))
        return [batch.n_id.tolist() for batch in loader]

    assert epoch(0) == epoch(0)
    assert epoch(0) != epoch(5)


def test_more_parts_than_nodes_is_one_error_naming_num_parts() -> None:
    with pytest.raises(ArgumentError, match=r"^num_parts=61 exceeds the graph's 60 nodes$"):
        ClusterGCN(num_parts=61, parts_per_batch=1).train_loader(ring(), SamplerContext(0, no_cache))
