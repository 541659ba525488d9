"""CYCLES: does a graph contain a cycle of a given length? (Loukas, 2020; Dwivedi et al., 2020)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor

from graphbench.data.info import DataFacts, FeatureSpec
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.base import Source
from graphbench.data.store.collate import collate
from graphbench.data.store.graph_store import GraphStore
from graphbench.vocabulary.errors import ConfigError
from graphbench.vocabulary.splits import SPLITS


def _tree_distances(parent: np.ndarray, source: int) -> np.ndarray:
    """Hop distances from ``source`` to every node of the tree given by ``parent`` (root: -1)."""
    n = len(parent)
    adjacency: list[list[int]] = [[] for _ in range(n)]
    for child in range(1, n):
        adjacency[child].append(int(parent[child]))
        adjacency[int(parent[child])].append(child)
    dist = np.full(n, -1)
    dist[source] = 0
    frontier = [source]
    while frontier:
        nxt = []
        for u in frontier:
            for v in adjacency[u]:
                if dist[v] < 0:
                    dist[v] = dist[u] + 1
                    nxt.append(v)
        frontier = nxt
    return dist


def random_tree(num_nodes: int, rng: np.random.Generator) -> np.ndarray:
    """A random recursive tree: node i > 0 attaches to a uniformly drawn earlier node."""
    parent = np.full(num_nodes, -1)
    parent[1:] = [rng.integers(0, i) for i in range(1, num_nodes)]
    return parent


def _undirected(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    return np.stack([np.concatenate([src, dst]), np.concatenate([dst, src])]).astype(np.int64)


def tree_graph(num_nodes: int, rng: np.random.Generator) -> np.ndarray:
    """``edge_index`` (both directions) of a random recursive tree: no cycle at all."""
    parent = random_tree(num_nodes, rng)
    return _undirected(np.arange(1, num_nodes), parent[1:])


def unicyclic_graph(num_nodes: int, cycle_length: int, rng: np.random.Generator) -> np.ndarray | None:
    r"""A random recursive tree on ``num_nodes`` nodes plus one edge that closes exactly one cycle of
    ``cycle_length`` nodes (the edge joins two nodes at tree distance ``cycle_length - 1``).

    Returns an undirected ``edge_index`` of shape [2, 2n] (both directions), or ``None`` when the tree
    has no pair of nodes at that distance (the caller draws another tree).
    """
    parent = random_tree(num_nodes, rng)
    for source in rng.permutation(num_nodes):
        candidates = np.flatnonzero(_tree_distances(parent, int(source)) == cycle_length - 1)
        if len(candidates):
            target = int(rng.choice(candidates))
            return _undirected(np.concatenate([np.arange(1, num_nodes), [source]]), np.concatenate([parent[1:], [target]]))
    return None


def generate_cycles(
    num_graphs: int, min_nodes: int, max_nodes: int, cycle_length: int, other_lengths: list[int], seed: int
) -> tuple[list[np.ndarray], Tensor]:
    r"""``num_graphs`` graphs, half positive (their only cycle has ``cycle_length`` nodes), half negative,
    with the same node-count distribution. Negatives are trees when ``other_lengths`` is empty (then a
    positive has one edge more than a tree of its size: "does the graph contain a cycle?", which a
    sum-aggregating MPNN can decide by counting); otherwise a negative's only cycle has a length drawn
    from ``other_lengths`` and both classes have exactly :math:`n` edges, so the model must tell the
    cycle's length (hard for MPNNs without positional encodings). Deterministic given ``seed``."""
    rng = np.random.default_rng(seed)
    graphs: list[np.ndarray] = []
    labels = np.arange(num_graphs) % 2
    rng.shuffle(labels)
    for label in labels:
        edge_index = None
        while edge_index is None:
            n = int(rng.integers(min_nodes, max_nodes + 1))
            if label == 0 and not other_lengths:
                edge_index = tree_graph(n, rng)
            else:
                length = cycle_length if label == 1 else int(rng.choice(other_lengths))
                edge_index = unicyclic_graph(n, length, rng)
        graphs.append(edge_index)
    return graphs, torch.from_numpy(labels).float().view(-1, 1)


class Cycles(Source):
    r"""A generated, graph-level binary task that needs no download: detect a cycle of
    ``cycle_length`` nodes (6 by default, as the CYCLES benchmark of Loukas (2020) used in
    Dwivedi et al. (2020)). Positives are random trees with one edge that closes a cycle of that
    length; negatives are trees (default) or close a cycle of another length (``other_lengths``,
    the harder variant). Nodes carry no features (a constant input), so a graph-agnostic model is at
    chance level, 50% accuracy. ``num_train``/``num_val``/``num_test`` graphs, in that order."""

    def __init__(
        self,
        *,
        num_train: int,
        num_val: int,
        num_test: int,
        min_nodes: int,
        max_nodes: int,
        cycle_length: int = 6,
        other_lengths: tuple[int, ...] = (),
        generation_seed: int = 0,
    ) -> None:
        if not 3 <= cycle_length <= min_nodes <= max_nodes:
            raise ConfigError(f"need 3 <= cycle_length <= min_nodes <= max_nodes, got {cycle_length}, {min_nodes}, {max_nodes}")
        others = [int(k) for k in other_lengths]
        if cycle_length in others or any(not 3 <= k <= min_nodes for k in others):
            raise ConfigError(f"other_lengths {others} must exclude cycle_length and lie in [3, min_nodes]")
        self.sizes = (num_train, num_val, num_test)
        self.min_nodes, self.max_nodes = min_nodes, max_nodes
        self.cycle_length, self.other_lengths = cycle_length, others
        self.generation_seed = generation_seed

    def facts(self, store: GraphStore | None = None) -> DataFacts:
        return DataFacts(num_outputs=1, node_features=FeatureSpec("constant"), edge_features=None)

    def cache_params(self) -> tuple[Any, ...]:
        return (self.sizes, self.min_nodes, self.max_nodes, self.cycle_length, self.other_lengths, self.generation_seed)

    def expected_num_graphs(self) -> int | None:
        return sum(self.sizes)

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, Tensor]]:
        total = sum(self.sizes)
        graphs, y = generate_cycles(
            total, self.min_nodes, self.max_nodes, self.cycle_length, self.other_lengths, self.generation_seed
        )
        xs = [torch.zeros(int(edge_index.max()) + 1, 1, dtype=torch.long) for edge_index in graphs]
        data, slices = collate([torch.from_numpy(edge_index) for edge_index in graphs], {"x": xs}, graph={"y": y})
        bounds = np.cumsum((0, *self.sizes))
        splits = {name: torch.arange(int(bounds[i]), int(bounds[i + 1])) for i, name in enumerate(SPLITS)}
        return GraphStore(data, slices), splits
