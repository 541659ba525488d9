r"""Random-walk structural encoding (RWSE)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.transforms import BaseTransform

from graphbench.transforms.precompute import CollatedGraphs, attach, num_nodes, parallel_map


class RWSE(BaseTransform):
    r"""Random-walk structural encoding from `"Graph Neural Networks with Learnable
    Structural and Positional Representations" <https://arxiv.org/abs/2110.07875>`_
    (Dwivedi et al., 2022): the probability that a random walk returns to its start
    node after :math:`t = 1, \dots, k` steps,

    .. math::
        \mathrm{RWSE}(i) = \big[ (P)_{ii}, (P^2)_{ii}, \dots, (P^k)_{ii} \big],
        \qquad P = D^{-1} A,

    where :math:`A_{ij}` is the (weighted, directed as given, self-loops kept, parallel
    edges summed) adjacency and :math:`D` the out-degrees. Isolated nodes (and nodes
    without out-edges) get :math:`P_{i\cdot} = 0`, hence all-zero encodings. Equal to
    PyG's :class:`~torch_geometric.transforms.AddRandomWalkPE` on simple graphs (up to
    float32 rounding).

    Computed by walks rather than matrix powers (:mod:`graphbench.transforms.walk_kernels`):
    each start node :math:`i` pushes the sparse row vector :math:`e_i M^m` through the CSR
    matrix, so a step costs the degrees of the nodes that a walk of exactly :math:`m` steps
    reaches from :math:`i`, not :math:`n` (on sparse graphs of large diameter such as molecules,
    a small fraction: on Peptides-func 5% of the :math:`n^2` entries on average over
    :math:`m \le 10`). Sums are taken in float64 and rounded once to float32. For a symmetric
    non-negative :math:`A` (undirected graphs), :math:`P` is similar to
    :math:`S = D^{-1/2} A D^{-1/2}` (zero rows and columns at isolated nodes), which has the
    same diagonal powers and is symmetric, so :math:`\lceil k/2 \rceil` steps suffice:

    .. math::
        (P^{2m})_{ii} = \sum_j (S^m)_{ij}^2, \qquad
        (P^{2m+1})_{ii} = \sum_j (S^m)_{ij} (S^{m+1})_{ij} .

    Directed or negatively weighted graphs take :math:`k` steps with :math:`P` itself; which
    way a graph takes is decided graph by graph. The graphs of a chunk form one block-diagonal
    matrix; a walk only meets its own graph's rows, so :meth:`forward`, :meth:`transform_many`
    and :meth:`transform_collated` give bitwise identical results, whatever the chunks (tested).

    Adds ``data[attr]`` of shape ``[N, k]`` (float32).

    Args:
        k (int): Number of random-walk steps.
        attr (str): Attribute name. (default: ``"rwse"``)
    """

    #: Largest graph handled (the walks from all ``N`` nodes cost up to ``N * k * |E|`` steps).
    MAX_NODES: int = 10_000
    #: Upper bound on ``sum(n * n)`` over the graphs of one chunk (a chunk is one task of the pool).
    CHUNK_ELEMENTS: int = 1 << 24

    def __init__(self, k: int, attr: str = "rwse") -> None:
        if k < 1:
            raise ValueError(f"RWSE needs k >= 1 random-walk steps, got k={k}")
        self.k = k
        self.attr = attr

    def forward(self, data: Data) -> Data:
        data[self.attr] = self._encode([data])[0]
        return data

    def transform_many(self, data_list: Sequence[Data]) -> list[Data]:
        r"""Batched :meth:`forward` over many graphs (returns shallow copies)."""
        return attach(data_list, [{self.attr: pe} for pe in self._encode(data_list)])

    def transform_collated(self, graphs: CollatedGraphs) -> dict[str, Tensor]:
        r"""The encodings of a whole collated dataset: ``{attr: [N, k]}``, one row per node of the
        concatenation, equal bit for bit to :meth:`forward` graph by graph (tested)."""
        counts = graphs.node_ptr.diff()
        self._check_size(int(counts.max()) if counts.numel() else 0)
        return {self.attr: return_probabilities(graphs, self.k, self.CHUNK_ELEMENTS)}

    def _encode(self, data_list: Sequence[Data]) -> list[Tensor]:
        counts = [num_nodes(data) for data in data_list]
        self._check_size(max(counts, default=0))
        pe = return_probabilities(CollatedGraphs.from_list(data_list, counts), self.k, self.CHUNK_ELEMENTS)
        first = data_list[0].edge_index if data_list else None
        device = first.device if first is not None else None
        if len(counts) == 1:
            return [pe.to(device)]
        # clone: a per-graph view would keep (and pickle) the whole array
        return [part.clone().to(device) for part in pe.split(counts)]

    def _check_size(self, largest: int) -> None:
        if largest > self.MAX_NODES:
            raise ValueError(
                f"RWSE walks k steps from every node, up to n*k*|E| operations per graph; a "
                f"graph has {largest} nodes > RWSE.MAX_NODES={self.MAX_NODES}. Use it on "
                f"graph-level datasets or choose pe=none for large graphs."
            )

    def __repr__(self) -> str:
        # repr names every argument: datamodules key their PE caches on it
        return f"{self.__class__.__name__}(k={self.k}, attr={self.attr!r})"


def return_probabilities(graphs: CollatedGraphs, k: int, max_elements: int) -> Tensor:
    r""":math:`(P^t)_{ii}` for :math:`t = 1..k` as one ``[N, k]`` float32 tensor over the nodes of
    ``graphs`` (see :class:`RWSE`). Chunks of at most ``max_elements`` (:meth:`CollatedGraphs.spans`)
    are walked in a thread pool (:func:`~graphbench.transforms.precompute.parallel_map`), each writing
    its own rows."""
    # Numba's import takes ~0.4 s: only runs that compute RWSE pay it
    from graphbench.transforms.walk_kernels import symmetric_returns, walk_matrix, walk_returns

    ends = graphs.edge_index.detach().cpu().numpy()
    if graphs.edge_weight is None:
        weight = np.ones(ends.shape[1])
    else:
        weight = graphs.edge_weight.detach().cpu().double().numpy().reshape(-1)
    node_ptr, edge_ptr = graphs.node_ptr.numpy(), graphs.edge_ptr.numpy()
    out = np.zeros((int(node_ptr[-1]), k), dtype=np.float32)

    def walk(span: tuple[int, int]) -> None:
        a, b = span
        first, last = edge_ptr[a], edge_ptr[b]
        nodes = node_ptr[a : b + 1] - node_ptr[a]
        indptr, indices, values, symmetric = walk_matrix(
            np.ascontiguousarray(ends[:, first:last]), weight[first:last], np.diff(edge_ptr[a : b + 1]), np.diff(nodes)
        )
        rows = out[node_ptr[a] : node_ptr[b]]
        # one kernel call per run of consecutive graphs of the same kind
        cuts = [0, *(np.flatnonzero(symmetric[1:] != symmetric[:-1]) + 1).tolist(), b - a]
        for lo, hi in pairwise(cuts):
            kernel = symmetric_returns if symmetric[lo] else walk_returns
            kernel(indptr, indices, values, rows, nodes[lo], nodes[hi])

    parallel_map(walk, graphs.spans(max_elements))
    return torch.from_numpy(out)
