r"""Random-walk structural encoding (RWSE)."""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence

import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.transforms import BaseTransform

from graphbench.transforms.precompute import attach, map_grouped


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

    Computed by sparse-dense products, linear in the number of edges per step (no dense
    :math:`N \times N` matrix product): the graphs of a chunk (equal node counts) form one
    block-diagonal CSR matrix, and the columns :math:`X_t = M^t [I; I; \dots]` are advanced one
    sparse product per step, in float32 as PyG computes (the degrees and the normalization in
    float64), which halves the memory traffic of float64 products. For a symmetric
    non-negative :math:`A` (undirected graphs), :math:`P` is similar to
    :math:`S = D^{-1/2} A D^{-1/2}` (zero rows and columns at isolated nodes), which has the same
    diagonal powers, and only :math:`\lceil k/2 \rceil` products are needed:

    .. math::
        (P^{2m})_{ii} = \lVert S^m e_i \rVert^2, \qquad
        (P^{2m+1})_{ii} = \langle S^m e_i, S^{m+1} e_i \rangle .

    Directed or negatively weighted graphs take :math:`k` products with :math:`P` itself. Each
    graph's rows only ever meet its own block, and CSR rows are computed independently, so
    :meth:`forward` and :meth:`transform_many` give bitwise identical results (tested on CPU).

    Adds ``data[attr]`` of shape ``[N, k]`` (float32).

    Args:
        k (int): Number of random-walk steps.
        attr (str): Attribute name. (default: ``"rwse"``)
    """

    #: Largest graph handled (powers of :math:`P` are dense ``[N, N]`` matrices).
    MAX_NODES: int = 10_000
    #: ``B * n * n`` per batched call (the float64 columns :math:`X_t` of a chunk).
    CHUNK_ELEMENTS: int = 1 << 19

    def __init__(self, k: int, attr: str = "rwse") -> None:
        if k < 1:
            raise ValueError(f"RWSE needs k >= 1 random-walk steps, got k={k}")
        self.k = k
        self.attr = attr

    def forward(self, data: Data) -> Data:
        n = 0 if data.num_nodes is None else int(data.num_nodes)
        data[self.attr] = self._kernel([data], n)[0][self.attr]
        return data

    def transform_many(self, data_list: Sequence[Data]) -> list[Data]:
        r"""Batched :meth:`forward` over many graphs (returns shallow copies)."""
        chunks = map_grouped(data_list, self._kernel, max_elements=self.CHUNK_ELEMENTS)
        return attach(data_list, chunks)

    def _kernel(self, graphs: Sequence[Data], key: Hashable) -> list[dict[str, Tensor]]:
        n = int(key)  # type: ignore[call-overload]
        if n > self.MAX_NODES:
            raise ValueError(
                f"RWSE keeps n columns per node (one per start node); a graph has {n} "
                f"nodes > RWSE.MAX_NODES={self.MAX_NODES}. Use it on graph-level "
                f"datasets or choose pe=none for large graphs."
            )
        pe = return_probabilities(graphs, n, self.k)
        # clone: a per-graph view would keep (and pickle) the whole chunk's storage
        return [{self.attr: pe[b].clone()} for b in range(len(graphs))]

    def __repr__(self) -> str:
        # repr names every argument: datamodules key their PE caches on it
        return f"{self.__class__.__name__}(k={self.k}, attr={self.attr!r})"


def return_probabilities(graphs: Sequence[Data], num_nodes: int, k: int) -> Tensor:
    r""":math:`(P^t)_{ii}` for :math:`t = 1..k`, shape ``[B, n, k]`` (float32), for graphs that
    all have ``num_nodes`` nodes (see :class:`RWSE`)."""
    n, batch = num_nodes, len(graphs)
    device = graphs[0].edge_index.device if graphs[0].edge_index is not None else None
    if n == 0:
        return torch.zeros(batch, 0, k, device=device)
    row, col, weight = block_edges(graphs, n, torch.float64)
    size = batch * n
    deg = torch.zeros(size, dtype=torch.float64, device=device).index_add_(0, row, weight)
    # X_0: node (b, i) holds the unit vector e_i of its own graph
    cols = torch.eye(n, dtype=torch.float32, device=device).repeat(batch, 1)
    if _is_symmetric(row, col, weight, size):
        dinv = torch.where(deg > 0, deg.clamp(min=1e-300).rsqrt(), torch.zeros_like(deg))
        sym = _csr(row, col, (dinv[row] * weight * dinv[col]).float(), size)
        steps = [cols]
        for _ in range(k // 2 + 1 if k % 2 else k // 2):
            steps.append(torch.sparse.mm(sym, steps[-1]))
        out = []
        for t in range(1, k + 1):
            half = t // 2  # (S^t)_ii = <S^half e_i, S^(t - half) e_i>
            out.append((steps[half] * steps[t - half]).view(batch, n, n).sum(1).view(-1))
        pe = torch.stack(out, dim=-1)
    else:
        trans = _csr(row, col, (weight * torch.where(deg > 0, 1.0 / deg, torch.zeros_like(deg))[row]).float(), size)
        diag = torch.arange(size, device=device), torch.arange(size, device=device) % n
        out = []
        for _ in range(k):
            cols = torch.sparse.mm(trans, cols)
            out.append(cols[diag])
        pe = torch.stack(out, dim=-1)
    return pe.view(batch, n, k)


def block_edges(graphs: Sequence[Data], num_nodes: int, dtype: torch.dtype) -> tuple[Tensor, Tensor, Tensor]:
    """The edges of ``graphs`` (each with ``num_nodes`` nodes) as one block-diagonal graph:
    ``(row, col, weight)``, graph ``b``'s node ``i`` numbered ``b * num_nodes + i``;
    ``data.edge_weight`` when present, else 1."""
    rows, cols, weights = [], [], []
    for b, data in enumerate(graphs):
        edge_index = data.edge_index
        if edge_index is None or edge_index.numel() == 0:
            continue
        rows.append(edge_index[0] + b * num_nodes)
        cols.append(edge_index[1] + b * num_nodes)
        w = data.get("edge_weight")
        weights.append(torch.ones(edge_index.size(1), dtype=dtype) if w is None else w.to(dtype).view(-1))
    if not rows:
        empty = torch.zeros(0, dtype=torch.long)
        return empty, empty, torch.zeros(0, dtype=dtype)
    return torch.cat(rows), torch.cat(cols), torch.cat(weights)


def _csr(row: Tensor, col: Tensor, value: Tensor, size: int) -> Tensor:
    """The ``size x size`` CSR matrix with ``value`` at ``(row, col)``; duplicates add up in products."""
    order = torch.argsort(row * size + col)
    rowptr = torch._convert_indices_from_coo_to_csr(row[order], size)
    with warnings.catch_warnings():  # "sparse CSR support is in beta": the product is tested
        warnings.simplefilter("ignore")
        return torch.sparse_csr_tensor(rowptr, col[order], value[order], (size, size), check_invariants=False)


def _is_symmetric(row: Tensor, col: Tensor, weight: Tensor, size: int) -> bool:
    """Whether the summed adjacency equals its transpose and has no negative weight."""
    if bool((weight < 0).any()):
        return False
    key, transposed = row * size + col, col * size + row
    forward = torch.sparse_coo_tensor(key.unsqueeze(0), weight, (size * size,), check_invariants=False).coalesce()
    backward = torch.sparse_coo_tensor(transposed.unsqueeze(0), weight, (size * size,), check_invariants=False).coalesce()
    return torch.equal(forward.indices(), backward.indices()) and torch.equal(forward.values(), backward.values())
