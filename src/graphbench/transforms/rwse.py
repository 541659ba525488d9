r"""Random-walk structural encoding (RWSE)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
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

    Directed or negatively weighted graphs take :math:`k` steps with :math:`P` itself. The
    graphs of a chunk form one block-diagonal matrix; a walk only meets its own graph's rows, so
    :meth:`forward` and :meth:`transform_many` give bitwise identical results (tested).

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
        data[self.attr] = self._kernel([data], [num_nodes(data)])[0][self.attr]
        return data

    def transform_many(self, data_list: Sequence[Data]) -> list[Data]:
        r"""Batched :meth:`forward` over many graphs (returns shallow copies)."""
        return attach(data_list, map_batched(data_list, self._kernel, max_elements=self.CHUNK_ELEMENTS))

    def _kernel(self, graphs: Sequence[Data], counts: Sequence[int]) -> list[dict[str, Tensor]]:
        if max(counts, default=0) > self.MAX_NODES:
            raise ValueError(
                f"RWSE walks k steps from every node, up to n*k*|E| operations per graph; a "
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
    # Numba's import takes ~0.4 s: only runs that compute RWSE pay it
    from graphbench.transforms.walk_kernels import symmetric_returns, walk_matrix, walk_returns

    edge_indices = [torch.zeros(2, 0, dtype=torch.long) if g.edge_index is None else g.edge_index.detach().cpu() for g in graphs]
    sizes = np.array([edge_index.size(1) for edge_index in edge_indices], dtype=np.int64)
    ends = torch.cat([torch.zeros(2, 0, dtype=torch.long), *edge_indices], dim=1).numpy()
    if any(g.get("edge_weight") is not None for g in graphs):
        weight = np.concatenate(
            [np.zeros(0)]
            + [
                np.ones(size) if g.get("edge_weight") is None else g.edge_weight.detach().cpu().double().numpy().reshape(-1)
                for g, size in zip(graphs, sizes)
            ]
        )
    else:
        weight = np.ones(ends.shape[1])
    indptr, indices, values, symmetric = walk_matrix(ends, weight, sizes, np.asarray(counts, dtype=np.int64))
    pe = (symmetric_returns if symmetric else walk_returns)(indptr, indices, values, k)
    device = graphs[0].edge_index.device if graphs and graphs[0].edge_index is not None else None
    # clone: a per-graph view would keep (and pickle) the whole chunk's array
    return [part.clone().to(device) for part in torch.from_numpy(pe).split(list(counts))]
