"""PATTERN and CLUSTER: node classification on stochastic block model graphs, generated as in
Benchmarking GNNs (Dwivedi et al., 2020; ``data/SBMs/generate_SBM_{PATTERN,CLUSTER}.ipynb``)."""

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
from graphbench.vocabulary.errors import ArgumentError, ConfigError
from graphbench.vocabulary.splits import SPLITS


def block_model(communities: np.ndarray, p: float, q: float, rng: np.random.Generator) -> np.ndarray:
    """Symmetric 0/1 adjacency: nodes of the same community are joined with probability ``p``,
    others with ``q``; no self-loops."""
    n = len(communities)
    prob = np.where(communities[:, None] == communities[None, :], p, q)
    upper = np.triu(rng.random((n, n)) < prob, k=1)
    return (upper | upper.T).astype(np.int8)


def community_sizes(num_communities: int, size_min: int, size_max: int, rng: np.random.Generator) -> np.ndarray:
    """Community labels ``0..C-1``, each of a size drawn uniformly from ``[size_min, size_max)`` (the
    notebooks' ``np.random.randint(size_min, size_max)``)."""
    sizes = rng.integers(size_min, size_max, size=num_communities) if size_max > size_min else np.full(num_communities, size_max)
    return np.repeat(np.arange(num_communities), sizes)


def _to_edge_index(adjacency: np.ndarray) -> np.ndarray:
    return np.stack(np.nonzero(adjacency)).astype(np.int64)


def pattern_graph(
    pattern_adj: np.ndarray,
    pattern_feat: np.ndarray,
    *,
    num_communities: int,
    size_min: int,
    size_max: int,
    p: float,
    q: float,
    q_pattern: float,
    vocab_size: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""One PATTERN graph: an SBM :math:`G` (``num_communities`` communities, ``p``/``q``) with random
    node features in ``{0..vocab_size-1}``, plus the fixed pattern :math:`P` (adjacency ``pattern_adj``,
    features ``pattern_feat``), each pattern node joined to each node of :math:`G` with probability
    ``q_pattern``; nodes are shuffled. Label 1: the node belongs to :math:`P`.
    Returns ``(edge_index, features [N, 1], labels [N])``."""
    communities = community_sizes(num_communities, size_min, size_max, rng)
    adj = block_model(communities, p, q, rng)
    feat = rng.integers(vocab_size, size=len(communities))
    n, n0 = len(communities), len(pattern_adj)
    link = (rng.random((n0, n)) < q_pattern).astype(np.int8)
    full = np.block([[adj, link.T], [link, pattern_adj]])
    feat = np.concatenate([feat, pattern_feat])
    label = np.concatenate([np.zeros(n, dtype=np.int64), np.ones(n0, dtype=np.int64)])
    perm = rng.permutation(n + n0)
    full = full[perm][:, perm]
    return _to_edge_index(full), feat[perm].reshape(-1, 1).astype(np.int64), label[perm]


def cluster_graph(
    *, num_communities: int, size_min: int, size_max: int, p: float, q: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One CLUSTER graph: an SBM with shuffled nodes; one node per community, drawn at random, carries
    its community ``c`` as feature ``c + 1``; every other node has feature 0. Label: the community."""
    communities = community_sizes(num_communities, size_min, size_max, rng)
    adj = block_model(communities, p, q, rng)
    perm = rng.permutation(len(communities))
    adj, communities = adj[perm][:, perm], communities[perm]
    feat = np.zeros(len(communities), dtype=np.int64)
    for c in range(num_communities):
        members = np.flatnonzero(communities == c)
        feat[members[rng.integers(len(members))]] = c + 1
    return _to_edge_index(adj), feat.reshape(-1, 1), communities.astype(np.int64)


class SBMPatterns(Source):
    r"""PATTERN (``kind: pattern``, 2 classes: is the node part of the planted pattern?) and CLUSTER
    (``kind: cluster``, 6 classes: the node's community, given one labelled seed node per community),
    generated with the parameters of Benchmarking GNNs (Dwivedi et al., 2020). PATTERN: 5 communities of
    5-35 nodes, ``p=0.5``, ``q=0.35``, features uniform in {0,1,2}; ``num_patterns`` random patterns of
    20 nodes (``p_pattern=0.5``, joined to the rest with ``q_pattern=0.5``), each planted in
    ``graphs_per_pattern`` train/val/test graphs (the paper: 100 patterns x 100/20/20 = 10k/2k/2k
    graphs). CLUSTER: 6 communities of 5-35 nodes, ``p=0.55``, ``q=0.25`` (the paper: 10k/1k/1k
    graphs). The defaults are smaller, for CPUs. Scored by weighted (class-balanced) accuracy.
    Deterministic given ``generation_seed`` and the parameters. Node-level, many graphs: every node
    is labelled and the graphs are split."""

    level = "node"

    def __init__(
        self,
        *,
        kind: str,
        num_communities: int,
        size_min: int = 5,
        size_max: int = 35,
        p: float,
        q: float,
        vocab_size: int = 3,
        num_patterns: int = 10,
        pattern_size: int = 20,
        p_pattern: float = 0.5,
        q_pattern: float = 0.5,
        graphs_per_pattern: tuple[int, int, int] | list[int] = (100, 20, 20),
        num_graphs: tuple[int, int, int] | list[int] = (1000, 100, 100),
        generation_seed: int = 0,
    ) -> None:
        if kind not in ("pattern", "cluster"):
            raise ArgumentError(f"kind={kind!r} is not valid; valid: ['pattern', 'cluster']")
        if not 1 <= size_min <= size_max or num_communities < 1:
            raise ConfigError(
                f"need num_communities >= 1 and 1 <= size_min <= size_max, got {num_communities}, {size_min}, {size_max}"
            )
        for key, value in {"p": p, "q": q, "p_pattern": p_pattern, "q_pattern": q_pattern}.items():
            if not 0.0 <= value <= 1.0:
                raise ArgumentError(f"{key}={value} must be a probability in [0, 1]")
        counts = list(graphs_per_pattern if kind == "pattern" else num_graphs)
        if len(counts) != 3 or any(int(c) < 1 for c in counts):
            key = "graphs_per_pattern" if kind == "pattern" else "num_graphs"
            raise ArgumentError(f"{key}={counts} must be three positive integers (train, val, test)")
        self.kind = kind
        self.params = dict(num_communities=num_communities, size_min=size_min, size_max=size_max, p=p, q=q)
        self.pattern_params = dict(
            vocab_size=vocab_size, num_patterns=num_patterns, pattern_size=pattern_size, p_pattern=p_pattern, q_pattern=q_pattern
        )
        self.counts = tuple(int(c) for c in counts)
        self.generation_seed = generation_seed

    @property
    def num_classes(self) -> int:
        return 2 if self.kind == "pattern" else int(self.params["num_communities"])

    def facts(self, store: GraphStore | None = None) -> DataFacts:
        cardinality = self.pattern_params["vocab_size"] if self.kind == "pattern" else self.params["num_communities"] + 1
        return DataFacts(
            num_outputs=self.num_classes,
            node_features=FeatureSpec("categorical", cardinalities=(int(cardinality),)),
            edge_features=None,
        )

    def cache_params(self) -> tuple[Any, ...]:
        pattern = sorted(self.pattern_params.items()) if self.kind == "pattern" else None
        return (self.kind, sorted(self.params.items()), pattern, self.counts, self.generation_seed)

    def generate(self) -> tuple[list[tuple[np.ndarray, np.ndarray, np.ndarray]], dict[str, list[int]]]:
        rng = np.random.default_rng(self.generation_seed)
        graphs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        members: dict[str, list[int]] = {split: [] for split in SPLITS}
        if self.kind == "cluster":
            for split, count in zip(members, self.counts):
                for _ in range(count):
                    members[split].append(len(graphs))
                    graphs.append(cluster_graph(**self.params, rng=rng))
            return graphs, members
        pp = self.pattern_params
        for _ in range(pp["num_patterns"]):
            pattern_adj = block_model(np.zeros(pp["pattern_size"], dtype=np.int64), pp["p_pattern"], pp["p_pattern"], rng)
            pattern_feat = rng.integers(pp["vocab_size"], size=pp["pattern_size"])
            for split, count in zip(members, self.counts):
                for _ in range(count):
                    members[split].append(len(graphs))
                    graphs.append(
                        pattern_graph(
                            pattern_adj,
                            pattern_feat,
                            **self.params,
                            q_pattern=pp["q_pattern"],
                            vocab_size=pp["vocab_size"],
                            rng=rng,
                        )
                    )
        return graphs, members

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, Tensor]]:
        graphs, members = self.generate()
        edge_index = [torch.from_numpy(g[0]) for g in graphs]
        data, slices = collate(
            edge_index, {"x": [torch.from_numpy(g[1]) for g in graphs], "y": [torch.from_numpy(g[2]) for g in graphs]}
        )
        return GraphStore(data, slices), {k: torch.tensor(v, dtype=torch.long) for k, v in members.items()}
