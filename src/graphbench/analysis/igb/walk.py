r"""Random-walk subgraphs of IGB (Li et al., "Rethinking the Setting of Semi-supervised Learning on
Graphs", IJCAI 2022, and its benchmark code).

A simple random walk on the undirected graph continues until it has traversed ``num_edges``
distinct (undirected) edges; the subgraph is the set of visited nodes with the traversed edges.
Successive walks form one chain: each starts where the previous one stopped, as in the IGB code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from torch import Tensor

from graphbench.vocabulary.errors import ConfigError


@dataclass(frozen=True)
class UndirectedGraph:
    """The simple undirected graph of an ``edge_index`` (self-loops and duplicates dropped) in CSR
    form: the neighbours of ``v`` are ``col[rowptr[v]:rowptr[v + 1]]`` and ``edge_id[k]`` is the
    undirected edge of CSR slot ``k`` (one id per unordered pair, ``edges[:, id]`` with ``u < v``)."""

    num_nodes: int
    rowptr: np.ndarray
    col: np.ndarray
    edge_id: np.ndarray
    edges: np.ndarray

    @classmethod
    def from_edge_index(cls, edge_index: Tensor, num_nodes: int) -> UndirectedGraph:
        src, dst = edge_index.cpu().numpy().astype(np.int64)
        keep = src != dst
        low, high = np.minimum(src[keep], dst[keep]), np.maximum(src[keep], dst[keep])
        pairs = np.unique(low * num_nodes + high)
        edges = np.stack([pairs // num_nodes, pairs % num_nodes])
        ids = np.arange(edges.shape[1])
        rows = np.concatenate([edges[0], edges[1]])
        cols = np.concatenate([edges[1], edges[0]])
        slot_ids = np.concatenate([ids, ids])
        order = np.lexsort((cols, rows))
        rowptr = np.zeros(num_nodes + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=num_nodes), out=rowptr[1:])
        return cls(num_nodes, rowptr, cols[order], slot_ids[order], edges)

    @property
    def num_edges(self) -> int:
        return int(self.edges.shape[1])

    def largest_component(self) -> tuple[np.ndarray, int]:
        """The nodes of the largest connected component and its number of edges."""
        n = self.num_nodes
        adjacency = coo_matrix((np.ones(self.num_edges), (self.edges[0], self.edges[1])), shape=(n, n))
        _, labels = connected_components(adjacency, directed=False)
        largest = int(np.bincount(labels).argmax())
        nodes = np.flatnonzero(labels == largest)
        return nodes, int((labels[self.edges[0]] == largest).sum())


def random_walk(
    graph: UndirectedGraph, start: int, num_edges: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, int]:
    """Walk from ``start`` until ``num_edges`` distinct undirected edges are traversed.

    Returns the sorted visited nodes, the sorted ids of the traversed edges (``graph.edges[:, ids]``)
    and the node the walk ended on. The walk must start in a component with at least ``num_edges``
    edges (it never leaves its component); the caller checks that."""
    if num_edges < 1:
        raise ConfigError(f"num_edges must be >= 1, got {num_edges}")
    rowptr, col, edge_id = graph.rowptr.tolist(), graph.col.tolist(), graph.edge_id.tolist()
    seen_edges: set[int] = set()
    visited = {start}
    current = start
    # uniforms drawn in blocks: one generator call per block instead of one per step
    block = max(1024, 4 * num_edges)
    while len(seen_edges) < num_edges:
        for u in rng.random(block).tolist():
            low, high = rowptr[current], rowptr[current + 1]
            if low == high:
                raise ConfigError(f"the walk reached node {current}, which has no neighbours; start it in a larger component")
            slot = low + int(u * (high - low))
            seen_edges.add(edge_id[slot])
            current = col[slot]
            visited.add(current)
            if len(seen_edges) == num_edges:
                break
    return np.array(sorted(visited), dtype=np.int64), np.array(sorted(seen_edges), dtype=np.int64), current
