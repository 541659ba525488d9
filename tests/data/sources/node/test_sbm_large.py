"""sbm-large: the O(E) SBM generator's homophily, degree, balance, determinism and memory."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest
import torch
from torch_geometric.utils import is_undirected

from graphbench.data.sources.node.sbm_large import SBMLarge, balanced_classes, sample_sbm_edges
from graphbench.data.sources.node.syn_homophily import edge_homophily
from graphbench.vocabulary.errors import ConfigError
from tests.data.sources.node.one_graph import one_graph_datamodule


def assert_simple_undirected(edge_index: torch.Tensor, num_nodes: int) -> None:
    """No self-loops, no duplicate edges, both directions, sorted by (row, col)."""
    assert bool((edge_index[0] != edge_index[1]).all())
    key = edge_index[0] * num_nodes + edge_index[1]
    assert bool((key[1:] > key[:-1]).all())  # strictly increasing: sorted and no duplicates
    assert is_undirected(edge_index, num_nodes=num_nodes)


@pytest.mark.parametrize("homophily", [0.2, 0.9])
def test_edge_homophily_degree_and_balance(homophily: float) -> None:
    source = SBMLarge(num_nodes=20_000, num_classes=5, avg_degree=8, homophily=homophily, feature_dim=4)
    graph = source.generate()
    assert graph.edge_index.size(1) == 20_000 * 8  # exactly the average degree: 80,000 undirected edges
    assert abs(edge_homophily(graph.edge_index, graph.y) - homophily) < 0.01
    assert_simple_undirected(graph.edge_index, 20_000)
    assert torch.bincount(graph.y).tolist() == [4000] * 5
    assert graph.x.shape == (20_000, 4)


def test_extreme_homophily_is_exact() -> None:
    g = torch.Generator().manual_seed(3)
    y = balanced_classes(30, 3, g)
    assert sorted(torch.bincount(y).tolist()) == [10, 10, 10]
    intra = sample_sbm_edges(y, 3, 40, 1.0, g)
    inter = sample_sbm_edges(y, 3, 40, 0.0, g)
    assert intra.size(1) == inter.size(1) == 40
    assert bool((y[intra[0]] == y[intra[1]]).all()) and bool((y[inter[0]] != y[inter[1]]).all())
    assert bool((intra[0] < intra[1]).all()) and intra.unique(dim=1).size(1) == 40


def test_deterministic_given_the_seed() -> None:
    a = SBMLarge(num_nodes=2000, avg_degree=6, generation_seed=7).generate()
    b = SBMLarge(num_nodes=2000, avg_degree=6, generation_seed=7).generate()
    c = SBMLarge(num_nodes=2000, avg_degree=6, generation_seed=8).generate()
    assert all(torch.equal(a[k], b[k]) for k in ("x", "edge_index", "y"))
    assert not torch.equal(a.y, c.y) and not torch.equal(a.x, c.x)


def test_features_are_class_centroids_plus_noise() -> None:
    clean = SBMLarge(num_nodes=100, num_classes=4, avg_degree=4, feature_dim=3, feature_noise=0.0).generate()
    for c in range(4):
        rows = clean.x[clean.y == c]
        assert torch.equal(rows, rows[:1].expand_as(rows))
    assert torch.unique(clean.x, dim=0).size(0) == 4
    noisy = SBMLarge(num_nodes=100, num_classes=4, avg_degree=4, feature_dim=3, feature_noise=2.0).generate()
    residual = noisy.x - clean.x  # same seed: same classes and centroids, the noise scaled by 2
    assert torch.equal(noisy.y, clean.y) and 1.5 < float(residual.std()) < 2.5


def test_two_hundred_thousand_nodes_never_need_a_quadratic_object() -> None:
    """An N x N object at 200k nodes is 40 GB (bool) or 320 GB (float): if the generator built one
    anywhere this test would run out of memory. The peak RSS grows by the edge list and features
    (800k directed edges: 13 MB; 200k x 8 floats: 6 MB) times a small factor, far below 1 GB."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    graph = SBMLarge(num_nodes=200_000, avg_degree=4, feature_dim=8).generate()
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert graph.edge_index.size(1) == 800_000 and grown_mib < 1024


def test_datamodule_caches_and_draws_the_random_split(tmp_path: Path) -> None:
    source = SBMLarge(num_nodes=1000, num_classes=4, avg_degree=6, feature_dim=5)
    dm = one_graph_datamodule(source, "sbm-large", "random", tmp_path, tmp_path, split_fractions=(0.5, 0.3, 0.2))
    assert (dm.info.num_outputs, dm.info.node_features.dim) == (4, 5)  # known before any data exists
    dm.prepare_data()
    dm.setup()
    assert len(list((tmp_path / "cache").glob("sbm-large-*.pt"))) == 1
    graph = dm.graph
    assert graph is not None and graph.num_nodes == 1000
    assert [int(graph[f"{s}_mask"].sum()) for s in ("train", "val", "test")] == [500, 300, 200]
    assert abs(float(graph.realised_homophily) - 0.8) < 0.05
    again = one_graph_datamodule(source, "sbm-large", "random", tmp_path, tmp_path, split_fractions=(0.5, 0.3, 0.2))
    again.setup()  # read from the cache
    assert again.graph is not None and torch.equal(again.graph.edge_index, graph.edge_index)


def test_bad_parameters() -> None:
    with pytest.raises(ConfigError, match="homophily"):
        SBMLarge(homophily=1.5)
    with pytest.raises(ConfigError, match="num_classes"):
        SBMLarge(num_classes=1)
    with pytest.raises(ConfigError, match="num_nodes"):
        SBMLarge(num_nodes=10, num_classes=10)
    with pytest.raises(ConfigError, match="too dense"):
        SBMLarge(num_nodes=100, num_classes=10, avg_degree=20, homophily=0.9)
    with pytest.raises(ConfigError, match="avg_degree"):
        SBMLarge(avg_degree=0)
