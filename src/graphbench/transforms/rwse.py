r"""Random-walk structural encoding (RWSE)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.transforms import BaseTransform

from graphbench.transforms.precompute import attach, map_batched, num_nodes


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

    Computed by sparse-sparse products (SciPy's CSR ``@``), in float32 as PyG computes (the
    degrees and the normalization in float64): the graphs of a chunk form one block-diagonal
    matrix, and only the nonzeros of its powers are stored and multiplied. Row :math:`i` of
    :math:`M^m` is nonzero only at the nodes that a walk of exactly :math:`m` steps reaches from
    :math:`i`, so on sparse graphs of large diameter (molecules) the work is a small fraction of
    the :math:`n^2` entries per power that dense columns would stream (on Peptides-func, 5% on
    average over :math:`m \le 10`). For a symmetric non-negative :math:`A` (undirected graphs),
    :math:`P` is similar to :math:`S = D^{-1/2} A D^{-1/2}` (zero rows and columns at isolated
    nodes), which has the same diagonal powers and is symmetric, so only
    :math:`\lceil k/2 \rceil` powers are needed:

    .. math::
        (P^{2m})_{ii} = \sum_j (S^m)_{ij}^2, \qquad
        (P^{2m+1})_{ii} = \sum_j (S^m)_{ij} (S^{m+1})_{ij} .

    Directed or negatively weighted graphs take :math:`k` products with :math:`P` itself. Each
    graph's rows only ever meet its own block and every row is computed on its own, so
    :meth:`forward` and :meth:`transform_many` give bitwise identical results (tested).

    Adds ``data[attr]`` of shape ``[N, k]`` (float32).

    Args:
        k (int): Number of random-walk steps.
        attr (str): Attribute name. (default: ``"rwse"``)
    """

    #: Largest graph handled (a power of :math:`P` can fill all ``N * N`` entries).
    MAX_NODES: int = 10_000
    #: Upper bound on ``sum(n * n)`` over the graphs of one chunk (a power's most entries).
    CHUNK_ELEMENTS: int = 1 << 24

    def __init__(self, k: int, attr: str = "rwse") -> None:
        if k < 1:
            raise ValueError(f"RWSE needs k >= 1 random-walk steps, got k={k}")
        self.k = k
        self.attr = attr

    def forward(self, data: Data) -> Data:
        data[self.attr] = self._kernel([data], [num_nodes(data)])[0][self.attr]
        return data

    def transform_many(self, data_list: Sequence[Data]) -> list[Data]:
        r"""Batched :meth:`forward` over many graphs (returns shallow copies)."""
        return attach(data_list, map_batched(data_list, self._kernel, max_elements=self.CHUNK_ELEMENTS))

    def _kernel(self, graphs: Sequence[Data], counts: Sequence[int]) -> list[dict[str, Tensor]]:
        if max(counts, default=0) > self.MAX_NODES:
            raise ValueError(
                f"RWSE stores powers of the random-walk matrix, up to n*n entries per graph; a "
                f"graph has {max(counts)} nodes > RWSE.MAX_NODES={self.MAX_NODES}. Use it on "
                f"graph-level datasets or choose pe=none for large graphs."
            )
        return [{self.attr: pe} for pe in return_probabilities(graphs, counts, self.k)]

    def __repr__(self) -> str:
        # repr names every argument: datamodules key their PE caches on it
        return f"{self.__class__.__name__}(k={self.k}, attr={self.attr!r})"


def return_probabilities(graphs: Sequence[Data], counts: Sequence[int], k: int) -> list[Tensor]:
    r""":math:`(P^t)_{ii}` for :math:`t = 1..k`, one ``[n, k]`` float32 tensor per graph (see
    :class:`RWSE`); ``counts`` are the graphs' node counts."""
    adj = block_adjacency(graphs, counts)
    pe = np.zeros((adj.shape[0], k), dtype=np.float32)
    deg = np.asarray(adj.sum(axis=1), dtype=np.float64).ravel()
    inv = np.zeros_like(deg)
    np.divide(1.0, deg, out=inv, where=deg > 0)
    row = np.repeat(np.arange(adj.shape[0]), np.diff(adj.indptr))
    if adj.nnz and adj.data.min() >= 0 and (adj != adj.T).nnz == 0:
        isqrt = np.sqrt(inv)
        sym = _with_values(adj, isqrt[row] * adj.data * isqrt[adj.indices])
        power = sym  # S^m, from m = 1; two powers are held at a time
        pe[:, 0] = sym.diagonal()
        for m in range(1, (k + 1) // 2 + 1):
            if 2 * m <= k:
                pe[:, 2 * m - 1] = _row_sums(power, power.data * power.data)
            if 2 * m + 1 <= k:
                following = sym @ power
                product = power.multiply(following).tocsr()
                pe[:, 2 * m] = _row_sums(product, product.data)
                power = following
    elif adj.nnz:
        trans = _with_values(adj, inv[row] * adj.data)
        power = trans
        for t in range(k):
            if t:
                power = power @ trans
            pe[:, t] = power.diagonal()
    device = graphs[0].edge_index.device if graphs and graphs[0].edge_index is not None else None
    # clone: a per-graph view would keep (and pickle) the whole chunk's array
    return [part.clone().to(device) for part in torch.from_numpy(pe).split(list(counts))]


def block_adjacency(graphs: Sequence[Data], counts: Sequence[int]) -> sp.csr_matrix:
    """The graphs (with ``counts`` nodes each) as one block-diagonal CSR adjacency (float64,
    parallel edges summed, sorted column indices; graph ``b``'s node ``i`` is row
    ``offset_b + i``). Entries are ``data.edge_weight`` when present, else 1."""
    offsets = np.cumsum([0, *counts])
    rows, cols, weights = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], [np.zeros(0)]
    for data, offset in zip(graphs, offsets.tolist()):
        edge_index = data.edge_index
        if edge_index is None or edge_index.numel() == 0:
            continue
        ends = edge_index.detach().cpu().numpy()
        rows.append(ends[0] + offset)
        cols.append(ends[1] + offset)
        w = data.get("edge_weight")
        weights.append(np.ones(ends.shape[1]) if w is None else w.detach().cpu().double().numpy().reshape(-1))
    size = int(offsets[-1])
    coo = sp.coo_matrix((np.concatenate(weights), (np.concatenate(rows), np.concatenate(cols))), shape=(size, size))
    adj = coo.tocsr()
    adj.sum_duplicates()  # canonical: sorted columns, so every row's sums run in a fixed order
    return adj


def _with_values(matrix: sp.csr_matrix, values: np.ndarray) -> sp.csr_matrix:
    """``matrix``'s sparsity pattern with float32 ``values``."""
    return sp.csr_matrix((values.astype(np.float32), matrix.indices, matrix.indptr), shape=matrix.shape)


def _row_sums(matrix: sp.csr_matrix, values: np.ndarray) -> np.ndarray:
    """Per row of ``matrix``, the float32 sum of ``values`` (aligned with ``matrix.data``)."""
    ptr = matrix.indptr
    sums = np.zeros(len(ptr) - 1, dtype=np.float32)
    filled = ptr[1:] > ptr[:-1]
    if filled.any():
        # reduceat sums from each start to the next; the starts of the non-empty rows increase
        # strictly, and a row's end is the next non-empty row's start (or the array's end)
        sums[filled] = np.add.reduceat(values, ptr[:-1][filled])
    return sums
