"""Random-walk subgraphs of IGB on hand-built graphs: the CSR view, the stopping rule, determinism."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from graphbench.analysis.igb.walk import UndirectedGraph, random_walk
from graphbench.vocabulary.errors import ConfigError

# a 4-cycle 0-1-2-3-0 with a chord 0-2, given with a duplicate, a reversed copy and a self-loop,
# plus a separate edge 4-5
EDGE_INDEX = torch.tensor([[0, 1, 2, 3, 0, 1, 0, 2, 4, 3], [1, 2, 3, 0, 2, 0, 1, 2, 5, 3]])


def test_undirected_graph_drops_loops_and_duplicates() -> None:
    graph = UndirectedGraph.from_edge_index(EDGE_INDEX, num_nodes=6)
    assert graph.edges.T.tolist() == [[0, 1], [0, 2], [0, 3], [1, 2], [2, 3], [4, 5]]
    assert graph.rowptr.tolist() == [0, 3, 5, 8, 10, 11, 12]
    assert graph.col.tolist() == [1, 2, 3, 0, 2, 0, 1, 3, 0, 2, 5, 4]
    # each CSR slot names the undirected edge it traverses
    for v in range(6):
        for slot in range(graph.rowptr[v], graph.rowptr[v + 1]):
            assert sorted((v, int(graph.col[slot]))) == graph.edges[:, graph.edge_id[slot]].tolist()
    nodes, num_edges = graph.largest_component()
    assert nodes.tolist() == [0, 1, 2, 3] and num_edges == 5


@pytest.mark.parametrize("num_edges", [1, 2, 3, 4, 5])
def test_walk_stops_at_exactly_the_requested_distinct_edges(num_edges: int) -> None:
    graph = UndirectedGraph.from_edge_index(EDGE_INDEX, num_nodes=6)
    for seed in range(5):
        nodes, edge_ids, end = random_walk(graph, 0, num_edges, np.random.default_rng(seed))
        assert len(edge_ids) == num_edges == len(set(edge_ids.tolist()))
        # the subgraph's nodes are exactly the endpoints of the traversed edges, all real edges
        assert nodes.tolist() == sorted(set(graph.edges[:, edge_ids].reshape(-1).tolist()))
        assert set(map(tuple, graph.edges[:, edge_ids].T.tolist())) <= {(0, 1), (0, 2), (0, 3), (1, 2), (2, 3)}
        assert end in nodes


def test_walk_is_deterministic_given_the_generator_seed() -> None:
    graph = UndirectedGraph.from_edge_index(EDGE_INDEX, num_nodes=6)
    first = random_walk(graph, 1, 4, np.random.default_rng(7))
    again = random_walk(graph, 1, 4, np.random.default_rng(7))
    assert np.array_equal(first[0], again[0]) and np.array_equal(first[1], again[1]) and first[2] == again[2]


def test_walk_from_an_isolated_node_is_refused() -> None:
    graph = UndirectedGraph.from_edge_index(torch.tensor([[0], [1]]), num_nodes=3)
    with pytest.raises(ConfigError, match="no neighbours"):
        random_walk(graph, 2, 1, np.random.default_rng(0))
