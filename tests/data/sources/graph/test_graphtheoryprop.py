"""GraphTheoryProp: targets on graphs whose answers are known, generators, determinism, normalization."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from graphbench.data.datamodules import GraphLevelDataModule
from graphbench.data.sources.graph import graphtheoryprop as gtp
from graphbench.vocabulary.errors import ConfigError
from tests.data._datamodules import graph_level


def adjacency(n: int, edges: list[tuple[int, int]]) -> np.ndarray:
    adj = np.zeros((n, n))
    for u, v in edges:
        adj[u, v] = adj[v, u] = 1
    return adj


def test_targets_of_known_graphs() -> None:
    path = adjacency(5, [(0, 1), (1, 2), (2, 3), (3, 4)])
    assert gtp.graph_targets(path) == pytest.approx([1.0, 4.0, 2 * math.cos(math.pi / 6)])
    two_triangles = adjacency(6, [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5)])
    assert gtp.graph_targets(two_triangles) == pytest.approx([0.0, 1.0, 2.0])
    star = adjacency(5, [(0, i) for i in range(1, 5)])
    assert gtp.graph_targets(star) == pytest.approx([1.0, 2.0, 2.0])  # spectral radius sqrt(n - 1)


def test_hop_distances() -> None:
    dist = gtp.hop_distances(adjacency(4, [(0, 1), (1, 2)]))
    assert dist[0].tolist() == [0, 1, 2, math.inf] and dist[3, 3] == 0


@pytest.mark.parametrize("make", [m for m, _ in gtp.MIXTURE], ids=lambda m: m.__name__)
def test_every_generator_gives_a_simple_graph_of_n_nodes(make) -> None:
    rng = np.random.default_rng(0)
    for n in (15, 19, 24):
        adj = make(n, rng)
        assert adj.shape == (n, n) and np.array_equal(adj, adj.T) and not adj.diagonal().any()
        if make in (gtp.tree, gtp.line, gtp.star, gtp.caterpillar, gtp.lobster):
            assert adj.sum() / 2 == n - 1 and gtp.graph_targets(adj)[0] == 1.0  # a tree: connected, n - 1 edges


def test_generated_graphs_have_no_isolated_node() -> None:
    rng = np.random.default_rng(1)
    for _ in range(50):
        adj = gtp.generate_graph(16, rng)
        assert adj.sum(axis=0).min() > 0 and np.array_equal(adj, adj.T)


def datamodule(cache: Path, seed: int = 0) -> GraphLevelDataModule:
    source = gtp.GraphTheoryProp(
        nodes={"train": [15, 16], "val": [15, 15], "test": [17, 17]},
        graphs_per_size={"train": 8, "val": 4, "test": 4},
        generation_seed=seed,
    )
    return graph_level(
        source,
        cache,
        cache,
        name="graphtheoryprop",
        task_type="regression",
        metric="log_mse",
        higher_is_better=False,
        batch_size=8,
    )


def test_datamodule_is_deterministic_and_normalized(tmp_path: Path) -> None:
    dm = datamodule(tmp_path / "a")
    dm.setup()
    assert [len(dm.splits[s]) for s in ("train", "val", "test")] == [16, 4, 4]
    data = dm.dataset.collated
    assert torch.allclose(data.y[dm.splits["train"]].max(dim=0).values, torch.ones(3))  # divided by the train maximum
    test_graph = dm.dataset[int(dm.splits["test"][0])]
    assert test_graph.num_nodes == 17 and test_graph.x.shape == (17, 2) and test_graph.x[:, 0].sum() == 1
    other = datamodule(tmp_path / "b")
    other.setup()
    assert torch.equal(other.dataset.collated.edge_index, data.edge_index) and torch.equal(other.dataset.collated.y, data.y)
    changed = datamodule(tmp_path / "c", seed=1)
    changed.setup()
    assert not torch.equal(changed.dataset.collated.y, data.y)
    assert dm.info.num_outputs == 3 and dm.info.node_features.dim == 2


def test_bad_sizes_are_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^nodes.val must be \[min, max\]"):
        gtp.GraphTheoryProp(
            nodes={"train": [15, 16], "val": [15], "test": [15, 15]}, graphs_per_size={"train": 1, "val": 1, "test": 1}
        )
