r"""Message passing by sparse-dense products, with the per-batch work done once.

A layer of a message-passing stack gathers node rows along the edges (:math:`x_{\mathrm{src}(e)}`)
and sums edge rows into their receiving nodes (:math:`\sum_{e:\,\mathrm{dst}(e)=i} m_e`). PyG does
both with ``index_select`` and ``scatter_add``, and autograd turns the gather's backward into an
``index_add``: on CPU, both sums are slow (atomic-free but serial over a large ``[E, F]`` buffer).
Written as products with the incidence matrices

.. math::
    S_{\mathrm{dst}} \in \{0,1\}^{N \times E},\ (S_{\mathrm{dst}})_{ie} = [\mathrm{dst}(e) = i],
    \qquad
    \mathrm{scatter}(m) = S_{\mathrm{dst}}\, m, \qquad
    \frac{\partial\, x_{\mathrm{src}}}{\partial x}^{\!\top} g = S_{\mathrm{src}}\, g,

the sums become CSR sparse-dense products (``torch.sparse.mm``), whose rows are independent.
The CSR matrices depend only on ``edge_index``, so :class:`EdgePlan` builds them once per batch
(one sort each) and every layer of the stack reuses them. GCN's normalized adjacency
:math:`\hat D^{-1/2}(A + I)\hat D^{-1/2}` (Kipf & Welling, 2017), from PyG's own ``gcn_norm``, is
likewise built once per batch, with its transpose for the backward pass.

The plan is explicit: :class:`~graphbench.modules.network.GraphNetwork` builds one per forward pass
and hands it to the layers that declare ``uses_plan = True``; nothing is cached between batches.
Results equal PyG's scatter path up to float summation order (tests/modules/test_propagation.py).
"""

from __future__ import annotations

import warnings
from functools import cached_property

import torch
from torch import Tensor
from torch_geometric.nn.conv.gcn_conv import gcn_norm
from torch_geometric.utils import scatter


def csr(rows: Tensor, cols: Tensor, values: Tensor, shape: tuple[int, int]) -> Tensor:
    """The ``shape`` CSR matrix with ``values`` at ``(rows, cols)`` (duplicates kept: they add up in products)."""
    order = torch.argsort(rows * shape[1] + cols)  # row-major, columns sorted within a row
    rowptr = torch._convert_indices_from_coo_to_csr(rows[order], shape[0])
    with warnings.catch_warnings():  # "sparse CSR support is in beta": the product below is tested
        warnings.simplefilter("ignore")
        return torch.sparse_csr_tensor(rowptr, cols[order], values[order], shape, check_invariants=False)


def spmm(matrix: Tensor, dense: Tensor) -> Tensor:
    """``matrix @ dense`` for a CSR ``matrix`` and a 2-D ``dense``: ``torch.sparse.mm`` less its work
    that is thrown away. ``sparse.mm`` zero-fills a result and adds the product to it; ``addmm`` with
    ``beta=0`` writes the product into an uninitialized one (``beta=0`` ignores the input, NaNs
    included). The sums and their order are the same (tests/modules/test_propagation.py)."""
    out = dense.new_empty((matrix.size(0), dense.size(1)))
    if out.numel() == 0 or dense.size(0) == 0:
        return out.zero_()
    return torch.addmm(out, matrix, dense, beta=0)


def weighted_sum_at_dst(messages: Tensor, edge_weight: Tensor, dst: Tensor, num_nodes: int) -> Tensor:
    r""":math:`\sum_{e:\,\mathrm{dst}(e) = i} w_e m_e` for every node :math:`i` (``[E, F]`` messages,
    ``[E]`` weights; PyG's ``scatter``): the weighted neighbour sum of GIN, GINE and SAGE when a batch
    carries ``edge_weight`` (GraphSAINT's :math:`1/\alpha_{u,v}`)."""
    return scatter(messages * edge_weight.to(messages.dtype).unsqueeze(-1), dst, 0, num_nodes, reduce="sum")


class _SparseProduct(torch.autograd.Function):
    """``matrix @ x`` with the backward ``transpose @ grad``, both precomputed CSR matrices (no
    gradient flows to the matrix: its entries depend on the graph alone)."""

    @staticmethod
    def forward(ctx, x: Tensor, matrix: Tensor, transpose: Tensor) -> Tensor:  # type: ignore[override]
        ctx.transpose = transpose
        return spmm(matrix, x.contiguous())

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None, None]:  # type: ignore[override]
        return spmm(ctx.transpose, grad.contiguous()), None, None


class _Gather(torch.autograd.Function):
    """``x[index]``, with the backward as a product with the incidence matrix of ``index``."""

    @staticmethod
    def forward(ctx, x: Tensor, index: Tensor, incidence: Tensor) -> Tensor:  # type: ignore[override]
        ctx.incidence = incidence
        return x.index_select(0, index)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None, None]:  # type: ignore[override]
        return spmm(ctx.incidence, grad.contiguous()), None, None


class _Scatter(torch.autograd.Function):
    """``scatter_sum(m, index)`` as a product with the incidence matrix; the backward gathers."""

    @staticmethod
    def forward(ctx, m: Tensor, index: Tensor, incidence: Tensor) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(index)
        return spmm(incidence, m.contiguous())

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None, None]:  # type: ignore[override]
        (index,) = ctx.saved_tensors
        return grad.index_select(0, index), None, None


def _transformed(x: Tensor) -> bool:
    """Whether ``x`` is inside a ``torch.func`` transform (``vmap``, ``vjp``: the NTK callback), where
    sparse CSR tensors cannot go; there the same sums run as gather and ``index_add``."""
    return bool(torch._C._functorch.is_functorch_wrapped_tensor(x))


class EdgePlan:
    r"""The sparse operators of one batch's ``edge_index`` (``[2, E]``, ``edge_index[1]`` receives),
    built on first use and shared by every layer that is handed this plan.

    * :meth:`gather_src` / :meth:`gather_dst`: :math:`x_{\mathrm{src}(e)}` / :math:`x_{\mathrm{dst}(e)}`
      for every edge, differentiable.
    * :meth:`scatter_dst`: :math:`\sum_{e:\,\mathrm{dst}(e) = i} m_e` for every node, differentiable.
    * :meth:`gcn_propagate`: :math:`\hat D^{-1/2}(A + I)\hat D^{-1/2} x` exactly as PyG's ``GCNConv``
      normalizes (``gcn_norm`` with remaining self-loops of weight 1, in-degrees).

    ``edge_weight`` (``[E]``, optional) makes :math:`A` weighted, :math:`A_{ij} = w_{ji}` for the edge
    :math:`j \to i`, in GCN's normalization only, as ``GCNConv(x, edge_index, edge_weight)``:
    :math:`\hat d_i = 1 + \sum_{e:\,\mathrm{dst}(e) = i} w_e` and the edge :math:`j \to i` carries
    :math:`w_{ji} / \sqrt{\hat d_i \hat d_j}` (an existing self-loop keeps its own weight instead of
    the added 1). Without it every weight is 1. The gathers and scatters are unweighted: a layer
    that weighs its messages multiplies them by :attr:`edge_weight` itself.
    """

    def __init__(self, edge_index: Tensor, num_nodes: int, edge_weight: Tensor | None = None) -> None:
        if edge_index.dim() != 2 or edge_index.size(0) != 2:
            raise ValueError(f"edge_index must have shape [2, E], got {tuple(edge_index.shape)}")
        if edge_weight is not None and edge_weight.shape != (edge_index.size(1),):
            raise ValueError(f"edge_weight must have shape [E] = [{edge_index.size(1)}], got {tuple(edge_weight.shape)}")
        self.edge_index = edge_index
        self.num_nodes = int(num_nodes)
        self.src, self.dst = edge_index[0], edge_index[1]
        self.edge_weight = edge_weight

    def _incidence(self, index: Tensor) -> Tensor:
        """``[N, E]`` CSR with a one at ``(index[e], e)``: its column indices are the edges in stable
        order of ``index`` (one stable sort of ``E`` keys, none when ``index`` is already sorted, as
        a batch's sources are), the same matrix :func:`csr` builds from ``(index, arange(E))``."""
        num_edges = index.numel()
        if num_edges < 2 or bool((index[1:] >= index[:-1]).all()):
            rows, cols = index, torch.arange(num_edges, device=index.device)
        else:
            rows, cols = torch.sort(index, stable=True)
        ones = torch.ones(num_edges, dtype=torch.float32, device=index.device)
        rowptr = torch._convert_indices_from_coo_to_csr(rows, self.num_nodes)
        with warnings.catch_warnings():  # "sparse CSR support is in beta": the products are tested
            warnings.simplefilter("ignore")
            return torch.sparse_csr_tensor(rowptr, cols, ones, (self.num_nodes, num_edges), check_invariants=False)

    @cached_property
    def src_incidence(self) -> Tensor:
        """:math:`S_{\\mathrm{src}}`, ``[N, E]`` CSR."""
        return self._incidence(self.src)

    @cached_property
    def dst_incidence(self) -> Tensor:
        """:math:`S_{\\mathrm{dst}}`, ``[N, E]`` CSR."""
        return self._incidence(self.dst)

    @cached_property
    def gcn_edges(self) -> tuple[Tensor, Tensor]:
        """GCN's normalized edges: ``edge_index`` with self-loops and their weights (PyG's ``gcn_norm``,
        with :attr:`edge_weight` when given)."""
        index, weight = gcn_norm(self.edge_index, self.edge_weight, self.num_nodes, improved=False, add_self_loops=True)
        assert weight is not None
        return index, weight

    @cached_property
    def gcn_adjacency(self) -> tuple[Tensor, Tensor]:
        """GCN's normalized adjacency (rows receive) and its transpose, CSR ``[N, N]``."""
        (src, dst), weight = self.gcn_edges
        shape = (self.num_nodes, self.num_nodes)
        return csr(dst, src, weight, shape), csr(src, dst, weight, shape)

    def gather_src(self, x: Tensor) -> Tensor:
        if _transformed(x):
            return x.index_select(0, self.src)
        return _Gather.apply(x, self.src, self._as(self.src_incidence, x))

    def gather_dst(self, x: Tensor) -> Tensor:
        if _transformed(x):
            return x.index_select(0, self.dst)
        return _Gather.apply(x, self.dst, self._as(self.dst_incidence, x))

    def scatter_dst(self, m: Tensor) -> Tensor:
        if _transformed(m):
            return m.new_zeros((self.num_nodes, *m.shape[1:])).index_add(0, self.dst, m)
        return _Scatter.apply(m, self.dst, self._as(self.dst_incidence, m))

    def gcn_propagate(self, x: Tensor) -> Tensor:
        if _transformed(x):
            (src, dst), weight = self.gcn_edges
            messages = x.index_select(0, src) * weight.to(x.dtype).unsqueeze(-1)
            return x.new_zeros((self.num_nodes, *x.shape[1:])).index_add(0, dst, messages)
        matrix, transpose = self.gcn_adjacency
        return _SparseProduct.apply(x, self._as(matrix, x), self._as(transpose, x))

    @staticmethod
    def _as(matrix: Tensor, like: Tensor) -> Tensor:
        """``matrix`` in ``like``'s dtype (products need equal dtypes; float32 is built, others cast)."""
        return matrix if matrix.dtype == like.dtype else matrix.to(like.dtype)
