"""Homophily measures on hand-built graphs with values worked out by hand, agreement with PyG's
``homophily`` where the definitions overlap, and the table (the command line: ``tests/analysis/test_main.py``)."""

from __future__ import annotations

import math

import pytest
import torch
from torch_geometric.utils import homophily as pyg_homophily

from graphbench.analysis.homophily import (
    adjusted_homophily,
    class_insensitive_homophily,
    edge_homophily,
    homophily_measures,
    homophily_table,
    label_informativeness,
    node_homophily,
    simple_undirected,
)

# The path 0 - 1 - 2 - 3 with labels 0, 0, 1, 1, given with one direction of each edge, a reversed
# duplicate (1 -> 0) and a self-loop (2 -> 2), which the measures must ignore.
PATH_EDGES = torch.tensor([[0, 1, 2, 2, 1], [1, 2, 3, 2, 0]])
PATH_Y = torch.tensor([0, 0, 1, 1])

# DGL's documented example graphs (dgl.edge_label_informativeness, dgl.adjusted_homophily).
DGL_LI_EDGES = torch.tensor([[0, 1, 2, 2, 3, 4], [1, 2, 0, 3, 4, 5]])
DGL_LI_Y = torch.tensor([0, 0, 0, 0, 1, 1])
DGL_ADJ_EDGES = torch.tensor([[1, 2, 0, 4], [0, 1, 2, 3]])
DGL_ADJ_Y = torch.tensor([0, 0, 0, 0, 1])


def test_simple_undirected_drops_self_loops_and_duplicates() -> None:
    assert simple_undirected(PATH_EDGES, 4).tolist() == [[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]]


def test_path_graph_by_hand() -> None:
    # edges {0,1} same, {1,2} different, {2,3} same: h_edge = 2/3
    assert edge_homophily(PATH_EDGES, PATH_Y, 4) == pytest.approx(2 / 3)
    # per node: 0 -> 1/1, 1 -> 1/2, 2 -> 1/2, 3 -> 1/1; mean 3/4
    assert node_homophily(PATH_EDGES, PATH_Y, 4) == pytest.approx(3 / 4)
    # h_0 = (1 + 1) / (d0 + d1 = 3) = 2/3 = h_1; n_k / n = 1/2; (1/6 + 1/6) / (C - 1 = 1) = 1/3
    assert class_insensitive_homophily(PATH_EDGES, PATH_Y, 4) == pytest.approx(1 / 3)
    # D_0 = D_1 = 3, 2|E| = 6: p_bar = (1/2, 1/2), sum p_bar^2 = 1/2; (2/3 - 1/2) / (1 - 1/2) = 1/3
    assert adjusted_homophily(PATH_EDGES, PATH_Y, 4) == pytest.approx(1 / 3)
    # directed edges: (0,0) x2, (1,1) x2, (0,1) x1, (1,0) x1 of 6 -> p = [[1/3, 1/6], [1/6, 1/3]];
    # H(p) = 2/3 ln 3 + 1/3 ln 6, H(p_bar) = ln 2 -> LI = 2 - H(p)/H(p_bar) = 5/3 - log2(3)
    assert label_informativeness(PATH_EDGES, PATH_Y, 4) == pytest.approx(5 / 3 - math.log2(3))


def test_label_informativeness_of_dgls_example() -> None:
    # undirected edges {0,1} {1,2} {0,2} {2,3} (class 0-0), {3,4} (0-1), {4,5} (1-1); 12 directed:
    # p = [[8, 1], [1, 2]] / 12; degrees 2,2,3,2,2,1 -> D = (9, 3), p_bar = (3/4, 1/4)
    p = torch.tensor([8, 1, 1, 2], dtype=torch.float64) / 12
    p_bar = torch.tensor([3, 1], dtype=torch.float64) / 4
    by_hand = 2 - float((p * p.log()).sum() / (p_bar * p_bar.log()).sum())
    value = label_informativeness(DGL_LI_EDGES, DGL_LI_Y, 6)
    assert value == pytest.approx(by_hand, abs=1e-12)
    assert value == pytest.approx(0.2517760099956565, abs=1e-7)  # dgl.edge_label_informativeness's docstring
    # h_edge = 5/6, sum p_bar^2 = 10/16: (5/6 - 5/8) / (3/8) = 5/9
    assert adjusted_homophily(DGL_LI_EDGES, DGL_LI_Y, 6) == pytest.approx(5 / 9)


def test_adjusted_homophily_of_dgls_example() -> None:
    # {0,1} {1,2} {0,2} same, {3,4} not: h_edge = 3/4; D = (2+2+2+1, 1) = (7, 1), 2|E| = 8;
    # sum p_bar^2 = 50/64 -> (3/4 - 50/64) / (14/64) = -1/7 (dgl.adjusted_homophily's docstring: -0.1428...)
    assert adjusted_homophily(DGL_ADJ_EDGES, DGL_ADJ_Y, 5) == pytest.approx(-1 / 7)


def test_node_homophily_skips_isolated_nodes() -> None:
    edges, y = PATH_EDGES, torch.tensor([0, 0, 1, 1, 0])  # node 4 has no neighbour
    assert node_homophily(edges, y, 5) == pytest.approx(3 / 4)
    # PyG counts the isolated node as 0: (1 + 1/2 + 1/2 + 1 + 0) / 5
    assert pyg_homophily(simple_undirected(edges, 5), y, method="node") == pytest.approx(3 / 5)


def test_undefined_measures_are_nan() -> None:
    one_class = homophily_measures(PATH_EDGES, torch.zeros(4, dtype=torch.long), 4)
    assert one_class["edge_homophily"] == 1.0
    for name in ("class_insensitive_homophily", "adjusted_homophily", "label_informativeness"):
        assert math.isnan(one_class[name]), name
    no_edges = homophily_measures(torch.empty(2, 0, dtype=torch.long), PATH_Y, 4)
    assert no_edges["num_edges"] == 0
    assert all(math.isnan(no_edges[name]) for name in ("edge_homophily", "node_homophily", "label_informativeness"))


def test_labels_must_be_class_indices() -> None:
    with pytest.raises(ValueError, match="one class index"):
        edge_homophily(PATH_EDGES, PATH_Y.float(), 4)
    assert edge_homophily(PATH_EDGES, PATH_Y.view(-1, 1), 4) == pytest.approx(2 / 3)  # [N, 1] is one label per node


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_agrees_with_pyg_on_a_random_undirected_graph(seed: int) -> None:
    generator = torch.Generator().manual_seed(seed)
    num_nodes, num_classes = 40, 4
    ring = torch.stack([torch.arange(num_nodes), (torch.arange(num_nodes) + 1) % num_nodes])  # no isolated node
    random_edges = torch.randint(0, num_nodes, (2, 120), generator=generator)
    edges = simple_undirected(torch.cat([ring, random_edges], dim=1), num_nodes)
    y = torch.randint(0, num_classes, (num_nodes,), generator=generator)
    measures = homophily_measures(edges, y, num_nodes)
    assert measures["edge_homophily"] == pytest.approx(pyg_homophily(edges, y, method="edge"), abs=1e-6)
    assert measures["node_homophily"] == pytest.approx(pyg_homophily(edges, y, method="node"), abs=1e-6)
    assert measures["class_insensitive_homophily"] == pytest.approx(pyg_homophily(edges, y, method="edge_insensitive"), abs=1e-6)
    # the measures of the raw (directed, duplicated, self-looped) edges are those of the simple graph
    assert homophily_measures(torch.cat([ring, random_edges], dim=1), y, num_nodes) == measures


def test_table_markdown_and_csv() -> None:
    rows = [
        {"dataset": "path", "num_nodes": 4, "edge_homophily": 2 / 3},
        {"dataset": "empty", "num_nodes": 4, "edge_homophily": math.nan},
    ]
    assert homophily_table(rows) == (
        "| dataset | num_nodes | edge_homophily |\n|---|---|---|\n| path | 4 | 0.6667 |\n| empty | 4 | n/a |\n"
    )
    assert homophily_table(rows, csv_format=True) == f"dataset,num_nodes,edge_homophily\npath,4,{2 / 3!r}\nempty,4,nan\n"
