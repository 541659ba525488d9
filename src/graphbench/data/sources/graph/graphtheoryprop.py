r"""GraphTheoryProp: the multitask benchmark of Corso et al. (2020, "Principal Neighbourhood
Aggregation"), also in Benchmarking GNNs, regenerated here deterministically.

PNA's benchmark has 3 node-level targets (eccentricity, Laplacian features :math:`LF`, single-source
shortest paths) and 3 graph-level ones (connectivity, diameter, spectral radius), each scored by
:math:`\log_{10}` MSE. This module is the graph-level half: a 3-output graph regression scored by
``log_mse`` (mean over the targets of :math:`\log_{10}` MSE). Inputs are PNA's: per node the one-hot
SSSP source flag and a value drawn from U[0, 1]. Targets are divided by their maximum over the
training set, as PNA does.

Graphs follow PNA's recipe: a type drawn from PNA's mixture (Erdős–Rényi 20%, Barabási–Albert 20%,
grid 5%, caveman 5%, tree 15%, ladder 5%, line 5%, star 5%, caterpillar 10%, lobster 10%), nodes
shuffled, then about 10% of the edges toggled; graphs with an isolated node are redrawn. The
generators are written with numpy here (trees are uniform random trees instead of networkx's
power-law trees), so the graphs are PNA's distribution, not PNA's exact files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch
from torch import Tensor

from graphbench.data.info import DataFacts, FeatureSpec
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.base import Source
from graphbench.data.store.collate import collate
from graphbench.data.store.graph_store import GraphStore
from graphbench.vocabulary.errors import ArgumentError
from graphbench.vocabulary.splits import SPLITS

TARGETS = ("is_connected", "diameter", "spectral_radius")


def _edges_to_adj(n: int, edges: list[tuple[int, int]]) -> np.ndarray:
    adj = np.zeros((n, n))
    for u, v in edges:
        if u != v:
            adj[u, v] = adj[v, u] = 1.0
    return adj


def _near_square(n: int) -> tuple[int, int]:
    m = max(i for i in range(1, int(np.sqrt(n)) + 1) if n % i == 0)
    return m, n // m


def erdos_renyi(n: int, rng: np.random.Generator) -> np.ndarray:
    p = rng.random()  # PNA: mean degree U[0, n), i.e. edge probability U[0, 1)
    upper = np.triu(rng.random((n, n)) < p, k=1)
    return (upper | upper.T).astype(float)


def barabasi_albert(n: int, rng: np.random.Generator) -> np.ndarray:
    m = int(rng.random() * (n - 1)) + 1
    edges = [(0, j) for j in range(1, m + 1)]  # a star on m + 1 nodes to start from
    degree = np.zeros(n)
    degree[0], degree[1 : m + 1] = m, 1
    for v in range(m + 1, n):
        # m distinct nodes drawn with probability proportional to degree (Gumbel top-k sampling)
        targets = np.argsort(np.log(degree[:v]) + rng.gumbel(size=v))[v - m :]
        edges += [(v, int(t)) for t in targets]
        degree[targets] += 1
        degree[v] = m
    return _edges_to_adj(n, edges)


def grid(n: int, rng: np.random.Generator) -> np.ndarray:
    rows, cols = _near_square(n)
    edges = [(r * cols + c, r * cols + c + 1) for r in range(rows) for c in range(cols - 1)]
    edges += [(r * cols + c, (r + 1) * cols + c) for r in range(rows - 1) for c in range(cols)]
    return _edges_to_adj(n, edges)


def caveman(n: int, rng: np.random.Generator) -> np.ndarray:
    cliques, size = _near_square(n)
    return _edges_to_adj(
        n, [(c * size + i, c * size + j) for c in range(cliques) for i in range(size) for j in range(i + 1, size)]
    )


def tree(n: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random labelled tree (decoded from a random Prüfer sequence)."""
    if n < 3:
        return line(n, rng)
    prufer = rng.integers(0, n, size=n - 2)
    degree = np.bincount(prufer, minlength=n) + 1
    edges = []
    for v in prufer:
        leaf = int(np.flatnonzero(degree == 1)[0])
        edges.append((leaf, int(v)))
        degree[leaf] -= 1
        degree[v] -= 1
    u, w = np.flatnonzero(degree == 1)
    return _edges_to_adj(n, [*edges, (int(u), int(w))])


def ladder(n: int, rng: np.random.Generator) -> np.ndarray:
    half = n // 2
    edges = [(i, i + 1) for i in range(half - 1)] + [(half + i, half + i + 1) for i in range(half - 1)]
    edges += [(i, half + i) for i in range(half)] + ([(0, n - 1)] if n % 2 else [])
    return _edges_to_adj(n, edges)


def line(n: int, rng: np.random.Generator) -> np.ndarray:
    return _edges_to_adj(n, [(i, i + 1) for i in range(n - 1)])


def star(n: int, rng: np.random.Generator) -> np.ndarray:
    return _edges_to_adj(n, [(0, i) for i in range(1, n)])


def caterpillar(n: int, rng: np.random.Generator) -> np.ndarray:
    backbone = int(rng.integers(1, n))
    edges = [(i - 1, i) for i in range(1, backbone)] + [(i, int(rng.integers(backbone))) for i in range(backbone, n)]
    return _edges_to_adj(n, edges)


def lobster(n: int, rng: np.random.Generator) -> np.ndarray:
    backbone = int(rng.integers(1, n))
    first = int(rng.integers(backbone + 1, n + 1))
    edges = [(i - 1, i) for i in range(1, backbone)] + [(i, int(rng.integers(backbone))) for i in range(backbone, first)]
    edges += [(i, int(rng.integers(backbone, first))) for i in range(first, n)]
    return _edges_to_adj(n, edges)


#: PNA's mixture of graph types and their probabilities
MIXTURE: tuple[tuple[Callable[[int, np.random.Generator], np.ndarray], float], ...] = (
    (erdos_renyi, 0.2),
    (barabasi_albert, 0.2),
    (grid, 0.05),
    (caveman, 0.05),
    (tree, 0.15),
    (ladder, 0.05),
    (line, 0.05),
    (star, 0.05),
    (caterpillar, 0.1),
    (lobster, 0.1),
)


def randomize(adj: np.ndarray, rng: np.random.Generator, keep: float = 0.9) -> np.ndarray:
    """Toggle edges without changing the expected edge count (PNA): an edge stays with probability
    ``keep`` (more when the graph is dense) and a non-edge appears with the matching probability."""
    n = adj.shape[0]
    edges = adj.sum() / 2
    non_edges = n * (n - 1) / 2 - edges
    if edges <= non_edges:
        stay, appear = keep, (1 - keep) * edges / non_edges
    else:
        stay, appear = keep + (1 - keep) * (edges - non_edges) / edges, 1 - keep
    draw = rng.uniform(0.0, 0.5, size=(n, n))
    draw = draw + draw.T
    return (draw < stay) * adj + (draw < appear) * (1 - adj) * (1 - np.eye(n))


def hop_distances(adj: np.ndarray) -> np.ndarray:
    """All-pairs shortest-path hop counts; ``inf`` between disconnected nodes."""
    n = adj.shape[0]
    dist = np.full((n, n), np.inf)
    np.fill_diagonal(dist, 0)
    reached, frontier = np.eye(n, dtype=bool), np.eye(n, dtype=bool)
    for hops in range(1, n):
        frontier = ((frontier.astype(float) @ adj) > 0) & ~reached
        if not frontier.any():
            break
        dist[frontier] = hops
        reached |= frontier
    return dist


def graph_targets(adj: np.ndarray) -> np.ndarray:
    """[connected (0/1), diameter (longest finite shortest path), spectral radius (max |eigenvalue|)]."""
    dist = hop_distances(adj)
    finite = np.isfinite(dist)
    return np.array([float(finite.all()), dist[finite].max(), np.abs(np.linalg.eigvalsh(adj)).max()])


def generate_graph(n: int, rng: np.random.Generator) -> np.ndarray:
    """One PNA graph of ``n`` nodes: mixture type, shuffled nodes, randomized edges, no isolated node."""
    kinds, probs = zip(*MIXTURE)
    make = kinds[int(rng.choice(len(kinds), p=probs))]
    while True:
        perm = rng.permutation(n)
        adj = randomize(make(n, rng)[np.ix_(perm, perm)], rng)
        if adj.max(axis=0).min() > 0:
            return adj


class GraphTheoryProp(Source):
    r"""GraphTheoryProp, graph-level: regress connectivity, diameter and spectral radius of random
    graphs (train on 15–24 nodes, val/test on 15–19, PNA's 5,120 / 640 / 1,280 graphs), scored by
    ``log_mse``. ``nodes[split]`` is the inclusive range of sizes and ``graphs_per_size[split]`` the
    number of graphs of each size. Deterministic given ``generation_seed``."""

    version = "1"

    def __init__(
        self,
        *,
        nodes: Mapping[str, list[int]],
        graphs_per_size: Mapping[str, int],
        generation_seed: int = 0,
    ) -> None:
        for split in SPLITS:
            lo_hi = list(nodes.get(split, ()))
            if len(lo_hi) != 2 or not 3 <= lo_hi[0] <= lo_hi[1] or int(graphs_per_size.get(split, 0)) < 1:
                raise ArgumentError(
                    f"nodes.{split} must be [min, max] with 3 <= min <= max and "
                    f"graphs_per_size.{split} >= 1; got {lo_hi}, {graphs_per_size.get(split)}"
                )
        self.nodes = {s: (int(nodes[s][0]), int(nodes[s][1])) for s in SPLITS}
        self.graphs_per_size = {s: int(graphs_per_size[s]) for s in SPLITS}
        self.generation_seed = generation_seed

    def facts(self, store: GraphStore | None = None) -> DataFacts:
        return DataFacts(num_outputs=len(TARGETS), node_features=FeatureSpec("dense", dim=2), edge_features=None)

    def cache_params(self) -> tuple[Any, ...]:
        return (sorted(self.nodes.items()), sorted(self.graphs_per_size.items()), self.generation_seed)

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, Tensor]]:
        rng = np.random.default_rng(self.generation_seed)
        edge_indices, xs, targets, splits = [], [], [], {}
        for split in SPLITS:
            start = len(targets)
            lo, hi = self.nodes[split]
            for n in range(lo, hi + 1):
                for _ in range(self.graphs_per_size[split]):
                    adj = generate_graph(n, rng)
                    source = int(rng.integers(n))
                    x = np.stack([np.eye(n)[source], rng.uniform(0.0, 1.0, size=n)], axis=1)
                    edge_indices.append(torch.from_numpy(np.stack(np.nonzero(adj)).astype(np.int64)))
                    xs.append(torch.from_numpy(x.astype(np.float32)))
                    targets.append(graph_targets(adj))
            splits[split] = torch.arange(start, len(targets))
        y = np.stack(targets)
        y = y / y[splits["train"].numpy()].max(axis=0)  # PNA: each target divided by its training-set maximum
        data, slices = collate(edge_indices, {"x": xs}, graph={"y": torch.from_numpy(y.astype(np.float32))})
        return GraphStore(data, slices), splits
