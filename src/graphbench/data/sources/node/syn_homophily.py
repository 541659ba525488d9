"""Synthetic graphs of controlled edge homophily with real node features, after syn-cora
(Zhu et al., 2020, "Beyond Homophily in Graph Neural Networks", H2GCN)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data

from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.base import OneGraphNodeSource
from graphbench.data.sources.node.planetoid import PLANETOID_NAMES, read_planetoid
from graphbench.vocabulary.errors import ArgumentError, ConfigError, DataError


def edge_homophily(edge_index: Tensor, y: Tensor) -> float:
    r"""Fraction of edges joining nodes of the same class, :math:`h = |\{(u,v) \in E : y_u = y_v\}| / |E|`."""
    if edge_index.size(1) == 0:
        return float("nan")
    return float((y[edge_index[0]] == y[edge_index[1]]).float().mean())


def homophilous_attachment(labels: np.ndarray, homophily: float, edges_per_node: int, rng: np.random.Generator) -> np.ndarray:
    r"""Undirected edges ``[E, 2]`` grown by preferential attachment with a class preference.

    Nodes arrive in random order; each new node :math:`v` adds ``edges_per_node`` edges to earlier
    nodes. For each edge, with probability ``homophily`` the target is drawn among earlier nodes of
    :math:`v`'s class, otherwise among earlier nodes of other classes (the other pool when one is
    empty), proportionally to degree + 1 and without repeating a target. The expected edge
    homophily is therefore ``homophily`` (up to the first few nodes of each class)."""
    n = len(labels)
    order = rng.permutation(n)
    degree = np.zeros(n)
    edges: list[tuple[int, int]] = []
    for step in range(1, n):
        v = order[step]
        earlier = order[:step]
        same_mask = labels[earlier] == labels[v]
        pools = {True: earlier[same_mask], False: earlier[~same_mask]}
        chosen: set[int] = set()
        for _ in range(min(edges_per_node, step)):
            want_same = bool(rng.random() < homophily)
            pool = pools[want_same] if len(pools[want_same]) else pools[not want_same]
            pool = pool[~np.isin(pool, list(chosen))] if chosen else pool
            if len(pool) == 0:
                pool = pools[not want_same][~np.isin(pools[not want_same], list(chosen))]
                if len(pool) == 0:
                    break
            weight = degree[pool] + 1.0
            u = int(rng.choice(pool, p=weight / weight.sum()))
            chosen.add(u)
            edges.append((int(v), u))
            degree[v] += 1
            degree[u] += 1
    return np.array(edges, dtype=np.int64).reshape(-1, 2)


class SynHomophily(OneGraphNodeSource):
    r"""A generated graph whose edge homophily is ``homophily`` (in [0, 1]): ``num_nodes`` nodes in
    ``num_classes`` equal classes, edges by :func:`homophilous_attachment`, and the features of each node
    drawn from the nodes of the same class of a real dataset (``feature_source``, Cora by default, read
    from the data root; without replacement while the class has enough nodes). The realised homophily is
    measured and stored in the graph (``graph.realised_homophily``). It ships no split: the DataModule
    draws a random ``split_fractions`` split with ``split_seed`` (the fixed split is ``random``).
    Deterministic given ``generation_seed`` and the parameters (Zhu et al., 2020, syn-cora)."""

    fixed_split = "random"

    def __init__(
        self,
        *,
        homophily: float,
        num_nodes: int = 1000,
        num_classes: int = 5,
        edges_per_node: int = 2,
        feature_source: str = "cora",
        generation_seed: int = 0,
    ) -> None:
        if isinstance(homophily, bool) or not isinstance(homophily, (int, float)) or not 0.0 <= float(homophily) <= 1.0:
            raise ArgumentError(f"homophily={homophily!r} must be a number in [0, 1]")
        if feature_source not in PLANETOID_NAMES:
            raise ArgumentError(f"feature_source={feature_source!r} is not valid; valid: {sorted(PLANETOID_NAMES)}")
        if num_classes < 2 or num_nodes < num_classes or edges_per_node < 1:
            raise ConfigError(
                f"need num_classes >= 2, num_nodes >= num_classes, edges_per_node >= 1; got {num_classes}, {num_nodes}, {edges_per_node}"
            )
        self.homophily = float(homophily)
        self.num_nodes, self.num_classes, self.edges_per_node = num_nodes, num_classes, edges_per_node
        self.feature_source = feature_source
        self.generation_seed = generation_seed

    def cache_params(self) -> tuple[Any, ...]:
        return (self.homophily, self.num_nodes, self.num_classes, self.edges_per_node, self.feature_source, self.generation_seed)

    def read_graph(self, raw: RawRoot) -> Data:
        source = read_planetoid(raw, self.feature_source)
        source_classes = int(source.y.max()) + 1
        if self.num_classes > source_classes:
            raise DataError(
                f"{self.feature_source} has {source_classes} classes; dataset.num_classes={self.num_classes} needs at most that many"
            )
        rng = np.random.default_rng(self.generation_seed)
        labels = np.arange(self.num_nodes) % self.num_classes
        rng.shuffle(labels)
        pairs = homophilous_attachment(labels, self.homophily, self.edges_per_node, rng)
        x = torch.zeros(self.num_nodes, source.x.size(1))
        source_y = source.y.numpy()
        for c in range(self.num_classes):
            targets = np.flatnonzero(labels == c)
            donors = np.flatnonzero(source_y == c)
            picked = rng.choice(donors, size=len(targets), replace=len(donors) < len(targets))
            x[torch.from_numpy(targets)] = source.x[torch.from_numpy(picked)]
        edge_index = torch.from_numpy(np.concatenate([pairs, pairs[:, ::-1]]).T.copy())
        y = torch.from_numpy(labels)
        empty = torch.zeros(self.num_nodes, dtype=torch.bool)  # the split is drawn at setup (split: random)
        return Data(
            x=x,
            edge_index=edge_index,
            y=y,
            train_mask=empty,
            val_mask=empty,
            test_mask=empty,
            realised_homophily=torch.tensor([edge_homophily(edge_index, y)]),
        )
