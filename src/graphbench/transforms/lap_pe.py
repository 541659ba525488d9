r"""Laplacian eigenvector positional encoding (LapPE)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.transforms import BaseTransform

from graphbench.transforms.precompute import attach, dense_adjacency, map_grouped


class LapPE(BaseTransform):
    r"""Laplacian eigenvector positional encoding from `"Benchmarking Graph Neural
    Networks" <https://arxiv.org/abs/2003.00982>`_ (Dwivedi et al., 2020).

    With the symmetric adjacency :math:`A` (self-loops removed, :math:`A_{ij} =
    \max(A_{ij}, A_{ji})` so directed input is read as undirected, parallel edges
    summed, ``data.edge_weight`` used when present), degrees :math:`d_i = \sum_j A_{ij}`
    and :math:`d_i^{-1/2} := 0` for isolated nodes, the symmetric normalized Laplacian

    .. math::
        L = I - D^{-1/2} A D^{-1/2} = U \Lambda U^\top,
        \qquad 0 \le \lambda_1 \le \lambda_2 \le \dots \le \lambda_N \le 2

    is diagonalised densely (``torch.linalg.eigh`` in float64, cast to float32).
    An isolated node is thus its own eigenvector with eigenvalue 1 (as in PyG's
    :func:`~torch_geometric.utils.get_laplacian`); :math:`\lambda_1 = 0` unless the
    graph has no edges.

    **Convention: the trivial eigenvector is dropped** (Dwivedi et al. 2020 and PyG's
    :class:`~torch_geometric.transforms.AddLaplacianEigenvectorPE`; GraphGPS instead
    keeps it). Node :math:`i` gets :math:`(u_2(i), \dots, u_{k+1}(i))`; only the first
    (smallest) eigenpair is dropped, so a graph with :math:`c` components keeps
    :math:`c - 1` further zero eigenvalues, whose vectors are then an arbitrary
    :math:`(c-1)`-dimensional subspace of the null space (as in PyG).

    **Padding:** when :math:`N - 1 < k` (i.e. :math:`N \le k`) the missing columns of
    ``lap_pe`` are 0 and those of ``lap_eigval`` are ``NaN`` (0 is a genuine eigenvalue,
    so NaN marks padding unambiguously; encoders mask it).

    **Signs:** each eigenvector is multiplied by the sign of its largest-magnitude
    entry (first index among near-ties), so the output is deterministic and usually
    independent of the LAPACK path; within a repeated eigenvalue the basis remains an
    arbitrary rotation. Encoders should still flip signs randomly in training.

    Adds ``data[eigen_attr]`` (float32 ``[N, k]``) and ``data[eigval_attr]`` (float32
    ``[N, k]``: the eigenvalue of column :math:`j` repeated on every node, so it batches
    node-wise). :meth:`transform_many` groups graphs by size and batches ``eigh``.

    Args:
        k (int): Number of non-trivial eigenvectors.
        eigen_attr (str): Attribute for the eigenvectors. (default: ``"lap_pe"``)
        eigval_attr (str): Attribute for the eigenvalues. (default: ``"lap_eigval"``)
    """

    #: Largest graph handled (the eigendecomposition is dense, :math:`O(N^3)`).
    MAX_NODES: int = 10_000

    def __init__(self, k: int, eigen_attr: str = "lap_pe", eigval_attr: str = "lap_eigval") -> None:
        if k < 1:
            raise ValueError(f"LapPE needs k >= 1 eigenvectors, got k={k}")
        self.k = k
        self.eigen_attr = eigen_attr
        self.eigval_attr = eigval_attr

    def forward(self, data: Data) -> Data:
        attrs = self._kernel([data], _num_nodes(data))[0]
        for name, value in attrs.items():
            data[name] = value
        return data

    def transform_many(self, data_list: Sequence[Data]) -> list[Data]:
        r"""Batched :meth:`forward` over many graphs (returns shallow copies)."""
        return attach(data_list, map_grouped(data_list, self._kernel))

    def _kernel(self, graphs: Sequence[Data], key: Hashable) -> list[dict[str, Tensor]]:
        n = int(key)  # type: ignore[call-overload]
        if n > self.MAX_NODES:
            raise ValueError(
                f"LapPE computes a dense eigendecomposition; a graph has {n} nodes "
                f"> LapPE.MAX_NODES={self.MAX_NODES}. Use it on graph-level datasets "
                f"or choose pe=none/rwse for large graphs."
            )
        vecs, vals = laplacian_eigenpairs(graphs, n, self.k)
        # clone: a per-graph view would keep (and pickle) the whole chunk's storage
        return [
            {self.eigen_attr: vecs[b].clone(), self.eigval_attr: vals[b].unsqueeze(0).repeat(n, 1)} for b in range(len(graphs))
        ]

    def __repr__(self) -> str:
        # repr names every argument: datamodules key their PE caches on it
        return f"{self.__class__.__name__}(k={self.k}, eigen_attr={self.eigen_attr!r}, eigval_attr={self.eigval_attr!r})"


def laplacian_eigenpairs(graphs: Sequence[Data], num_nodes: int, k: int) -> tuple[Tensor, Tensor]:
    r"""Eigenpairs 2..k+1 of :math:`L_{sym}` for graphs that all have ``num_nodes`` nodes.

    Returns float32 ``vecs`` ``[B, n, k]`` (0-padded) and ``vals`` ``[B, k]``
    (NaN-padded), following the conventions documented in :class:`LapPE`.
    """
    n, batch = num_nodes, len(graphs)
    device = graphs[0].edge_index.device if graphs[0].edge_index is not None else None
    vecs = torch.zeros(batch, n, k, device=device)
    vals = torch.full((batch, k), float("nan"), device=device)
    kk = min(k, n - 1)
    if kk <= 0:
        return vecs, vals
    adj = dense_adjacency(graphs, n, torch.float64, remove_self_loops=True)
    adj = torch.maximum(adj, adj.transpose(1, 2))
    deg = adj.sum(-1)
    dinv = torch.where(deg > 0, deg.clamp(min=1e-300).rsqrt(), torch.zeros_like(deg))
    eye = torch.eye(n, dtype=adj.dtype, device=adj.device)
    lap = eye - dinv.unsqueeze(-1) * adj * dinv.unsqueeze(-2)
    evals, evecs = torch.linalg.eigh(lap)
    evals, evecs = evals[:, 1 : kk + 1], evecs[:, :, 1 : kk + 1]
    evecs = evecs * _canonical_sign(evecs).unsqueeze(1)
    vecs[:, :, :kk] = evecs.to(vecs.dtype)
    vals[:, :kk] = evals.to(vals.dtype)
    return vecs, vals


def _canonical_sign(evecs: Tensor, tol: float = 1e-6) -> Tensor:
    r"""Sign of each eigenvector's largest-magnitude entry (first index among near-ties).

    ``evecs`` is ``[B, n, k]``; returns ``[B, k]`` with entries in :math:`\{-1, +1\}`.
    """
    mag = evecs.abs()
    near_max = mag >= mag.amax(dim=1, keepdim=True) - tol
    first = near_max.to(torch.int8).argmax(dim=1, keepdim=True)  # first True along nodes
    sign = evecs.gather(1, first).squeeze(1).sign()
    return torch.where(sign == 0, torch.ones_like(sign), sign)


def _num_nodes(data: Data) -> int:
    n = data.num_nodes
    return 0 if n is None else int(n)
