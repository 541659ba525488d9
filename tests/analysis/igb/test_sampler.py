"""i.i.d. subgraph sampling: determinism, subgraph contents, burn-in accounting, overlap and coverage."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from graphbench.analysis.igb.sampler import overlap_and_coverage, sample_subgraphs, subgraph_data
from graphbench.analysis.igb.walk import UndirectedGraph
from graphbench.vocabulary.errors import ConfigError


def grid(side: int = 6) -> Data:
    """A side x side grid; labels by row parity and column half."""
    index = torch.arange(side * side).view(side, side)
    right = torch.stack([index[:, :-1].reshape(-1), index[:, 1:].reshape(-1)])
    down = torch.stack([index[:-1].reshape(-1), index[1:].reshape(-1)])
    edge_index = torch.cat([right, down], dim=1)
    rows, cols = torch.div(torch.arange(side * side), side, rounding_mode="floor"), torch.arange(side * side) % side
    y = (rows % 2) * 2 + (cols >= side // 2).long()
    return Data(
        x=torch.eye(side * side), y=y, edge_index=torch.cat([edge_index, edge_index.flip(0)], dim=1), num_nodes=side * side
    )


def sample(graph: Data, **kwargs):
    return sample_subgraphs(graph.edge_index, graph.y, graph.num_nodes, 4, **{"num_subgraphs": 6, "num_edges": 12, **kwargs})


def test_same_seed_same_subgraphs_other_seed_others() -> None:
    graph = grid()
    first, stats = sample(graph, seed=3)
    again, _ = sample(graph, seed=3)
    other, _ = sample(graph, seed=4)
    assert [s.nodes.tolist() for s in first] == [s.nodes.tolist() for s in again]
    assert [s.split_seed for s in first] == [s.split_seed for s in again]
    assert [s.nodes.tolist() for s in first] != [s.nodes.tolist() for s in other]
    assert len(first) == stats.kept == 6 and stats.accepted == stats.kept + 5 and stats.proposed >= stats.accepted


def test_subgraphs_hold_real_edges_and_an_igb_split() -> None:
    graph = grid()
    undirected = UndirectedGraph.from_edge_index(graph.edge_index, graph.num_nodes)
    real = {tuple(e) for e in graph.edge_index.T.tolist()}
    samples, _ = sample(graph, seed=0, burn_in=0)
    for s in samples:
        assert len(s.edge_ids) == 12 and s.node_kl >= 0 and s.edge_kl >= 0
        data = subgraph_data(graph, undirected, s)
        assert data.num_nodes == len(s.nodes) and data.edge_index.size(1) == 24
        original = {(int(s.nodes[a]), int(s.nodes[b])) for a, b in data.edge_index.T.tolist()}
        assert original <= real
        assert torch.equal(data.y, graph.y[torch.from_numpy(s.nodes)])
        counts = [int(data[f"{k}_mask"].sum()) for k in ("train", "val", "test")]
        n = len(s.nodes)
        assert counts == [round(0.1 * n), round(0.1 * n), n - 2 * round(0.1 * n)]


def test_num_edges_beyond_the_largest_component_is_refused() -> None:
    graph = grid(3)  # 12 edges
    with pytest.raises(ConfigError, match=r"num_edges=13 must lie in 1\.\.12"):
        sample(graph, num_edges=13)


def test_overlap_and_coverage_on_hand_made_sets() -> None:
    sets = [np.array([0, 1, 2]), np.array([1, 2, 3]), np.array([5])]
    overlap, coverage = overlap_and_coverage(sets, num_nodes=10)
    # Jaccard: {0,1,2} vs {1,2,3} = 2/4; the others 0
    assert overlap == pytest.approx((0.5 + 0.0 + 0.0) / 3)
    assert coverage == pytest.approx(0.5)
    one, single_coverage = overlap_and_coverage([np.array([4, 7])], num_nodes=8)
    assert np.isnan(one) and single_coverage == 0.25
