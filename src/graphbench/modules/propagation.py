r"""Message passing with the per-batch work done once.

A layer of a message-passing stack gathers node rows along the edges (:math:`x_{\mathrm{src}(e)}`)
and sums edge rows into their receiving nodes (:math:`\sum_{e:\,\mathrm{dst}(e)=i} m_e`).
:class:`EdgePlan` holds what depends on a batch's ``edge_index`` alone, built once and shared by
every layer of the stack: GCN's normalized adjacency :math:`\hat D^{-1/2}(A + I)\hat D^{-1/2}`
(Kipf & Welling, 2017), from PyG's own ``gcn_norm``, as a CSR matrix with its transpose for the
backward pass, so that a GCN layer is one sparse-dense product (``torch.sparse.mm``) instead of
PyG's per-layer renormalization, gather, edge-weight product and scatter.

The gathers and the sums of per-edge messages (GINE, GatedGCN) are torch's ``index_select`` and
``index_add_``. Written as products with the ``[N, E]`` incidence matrices they were measured
slower on a quiet 2-core CPU: the LRGB-tuned GINE epoch at 0.92x of plain PyG's, against 1.07x with
the index ops (``benchmarks/reference.py``; README, Performance).

The plan is explicit: :class:`~graphbench.modules.network.GraphNetwork` hands one plan per forward
pass to the layers that declare ``uses_plan = True``. It takes it from a :class:`PlanMemo`, which
keeps the last batch's plan while the same ``edge_index`` tensor comes back unchanged: full-batch
training and evaluation run every step on one graph, whose plan is then built once per run.
Inside ``torch.func``'s gradient transforms and ``torch.compile``, which take no sparse CSR tensors,
GCN's product runs as a gather and ``index_add`` of the same normalized edges; under ``vmap`` alone
the batched inputs go through one CSR product side by side.
Results equal PyG's paths up to float summation order (tests/modules/test_propagation.py).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor
from torch_geometric.index import index2ptr
from torch_geometric.nn.conv.gcn_conv import gcn_norm
from torch_geometric.utils import scatter

from graphbench.speedups.functorch import only_vmapped, transformed


def traceable_gcn_norm(
    edge_index: Tensor, edge_weight: Tensor | None, num_nodes: int, self_loop_weight: float = 1.0
) -> tuple[Tensor, Tensor]:
    r"""PyG's ``gcn_norm(edge_index, edge_weight, num_nodes, add_self_loops=True)`` in shapes that
    depend on the sizes alone, so that ``torch.compile`` traces it in one graph (PyG's self-loop
    search, a ``nonzero``, has a data-dependent shape). An existing self-loop :math:`i \to i` keeps
    its place with weight 0 and hands its weight to the loop appended for :math:`i` (``self_loop_weight``
    where there is none: 1, or 2 for ``improved``), as PyG's ``add_remaining_self_loops`` does; the zero-weight edges add nothing, so products
    with the result equal those with PyG's. Returns ``[2, E + N]`` edges and their weights
    :math:`w_{ji} / \sqrt{\hat d_i \hat d_j}`."""
    src, dst = edge_index[0], edge_index[1]
    weight = edge_index.new_ones(edge_index.size(1), dtype=torch.float32) if edge_weight is None else edge_weight
    is_loop = src == dst
    # the weight of node i's existing self-loop, or 1; a dummy slot num_nodes takes the other edges
    slot = torch.where(is_loop, src, num_nodes)
    loop_weight = weight.new_full((num_nodes + 1,), self_loop_weight).scatter(0, slot, weight)[:num_nodes]
    nodes = torch.arange(num_nodes, device=edge_index.device, dtype=edge_index.dtype)
    index = torch.cat([edge_index, torch.stack([nodes, nodes])], dim=1)
    weight = torch.cat([torch.where(is_loop, 0.0, weight), loop_weight])
    degree = weight.new_zeros(num_nodes).index_add_(0, index[1], weight)
    inv_sqrt = degree.pow(-0.5).masked_fill(degree == 0, 0.0)
    return index, inv_sqrt[index[0]] * weight * inv_sqrt[index[1]]


def csr(rows: Tensor, cols: Tensor, values: Tensor, shape: tuple[int, int]) -> Tensor:
    """The ``shape`` CSR matrix with ``values`` at ``(rows, cols)`` (duplicates kept: they add up in products)."""
    order = torch.argsort(rows * shape[1] + cols)  # row-major, columns sorted within a row
    rowptr = index2ptr(rows[order], shape[0])
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


class _CsrProduct(torch.autograd.Function):
    r"""``matrix @ x`` with the backward ``transpose @ grad``, both precomputed CSR matrices (no
    gradient flows to the matrix), outside ``torch.func`` transforms: the products of
    :class:`_SparseProduct`, whose ``setup_context`` makes every ``apply`` bind its arguments to
    ``forward``'s signature in Python (``inspect``), written with ``forward(ctx, ...)``, which does not."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, matrix: Tensor, transpose: Tensor) -> Tensor:  # type: ignore[override]
        ctx.matrix, ctx.transpose = matrix, transpose
        return spmm(matrix, x.contiguous())

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None, None]:  # type: ignore[override]
        if torch.is_grad_enabled():  # create_graph: the gradient must itself be differentiable
            return _CsrProduct.apply(grad, ctx.transpose, ctx.matrix), None, None
        return spmm(ctx.transpose, grad.contiguous()), None, None


class _SparseProduct(torch.autograd.Function):
    r"""``matrix @ x`` with the backward ``transpose @ grad``, both precomputed CSR matrices (no
    gradient flows to the matrix: its entries depend on the graph alone).

    Under ``vmap`` (IGB's batched fits: :math:`K` networks on one graph) the :math:`K` inputs
    :math:`x_k \in \mathbb{R}^{N \times F}` share the matrix, so their products are one product with
    the columns side by side, :math:`S [x_1 \cdots x_K]`, instead of :math:`K` gathers and scatters."""

    @staticmethod
    def forward(x: Tensor, matrix: Tensor, transpose: Tensor) -> Tensor:  # type: ignore[override]
        return spmm(matrix, x.contiguous())

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Tensor, Tensor, Tensor], output: Tensor) -> None:
        ctx.matrix, ctx.transpose = inputs[1], inputs[2]

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None, None]:  # type: ignore[override]
        return _SparseProduct.apply(grad, ctx.transpose, ctx.matrix), None, None

    @staticmethod
    def vmap(
        info: Any, in_dims: tuple[int | None, None, None], x: Tensor, matrix: Tensor, transpose: Tensor
    ) -> tuple[Tensor, int | None]:
        if in_dims[0] is None:
            return _SparseProduct.apply(x, matrix, transpose), None
        side_by_side = x.movedim(in_dims[0], 1)  # [N, K, ...]
        product = _SparseProduct.apply(side_by_side.reshape(side_by_side.size(0), -1), matrix, transpose)
        return product.view(matrix.size(0), *side_by_side.shape[1:]), 1


class EdgePlan:
    r"""What every layer needs from one batch's ``edge_index`` (``[2, E]``, ``edge_index[1]`` receives),
    built on first use and shared by every layer that is handed this plan.

    * :meth:`gather_src` / :meth:`gather_dst`: :math:`x_{\mathrm{src}(e)}` / :math:`x_{\mathrm{dst}(e)}`
      for every edge, differentiable.
    * :meth:`scatter_dst`: :math:`\sum_{e:\,\mathrm{dst}(e) = i} m_e` for every node, differentiable.
    * :meth:`gcn_propagate`: :math:`\hat D^{-1/2}(A + I)\hat D^{-1/2} x` exactly as PyG's ``GCNConv``
      normalizes (``gcn_norm`` with remaining self-loops of weight 1, in-degrees); with
      ``self_loop_weight=2``, :math:`A + 2I` as ``GCNConv(improved=True)``.

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
        # built on first use; a plain cache, since torch.compile cannot trace functools.cached_property's
        # lock (Python < 3.12)
        self._gcn_edges: dict[float, tuple[Tensor, Tensor]] = {}
        self._gcn_adjacency: dict[float, tuple[Tensor, Tensor]] = {}

    @property
    def gcn_edges(self) -> tuple[Tensor, Tensor]:
        """GCN's normalized edges: ``edge_index`` with self-loops and their weights (PyG's ``gcn_norm``,
        with :attr:`edge_weight` when given)."""
        return self.normalized_edges(1.0)

    @property
    def gcn_adjacency(self) -> tuple[Tensor, Tensor]:
        """GCN's normalized adjacency (rows receive) and its transpose, CSR ``[N, N]``."""
        return self.normalized_adjacency(1.0)

    def normalized_edges(self, self_loop_weight: float) -> tuple[Tensor, Tensor]:
        r"""The normalized edges of :math:`A + wI` (``self_loop_weight`` :math:`w`: 1 for GCN, 2 for
        ``GCNConv(improved=True)``): PyG's ``gcn_norm`` with that fill value, unit edge weights when
        there are none (PyG 2.8.1 drops the fill value without them)."""
        if self_loop_weight not in self._gcn_edges:
            if torch.compiler.is_compiling():
                edges = traceable_gcn_norm(self.edge_index, self.edge_weight, self.num_nodes, self_loop_weight)
            elif self_loop_weight == 1.0:
                edges = gcn_norm(self.edge_index, self.edge_weight, self.num_nodes, improved=False, add_self_loops=True)
            elif self_loop_weight == 2.0:
                weight = (
                    self.edge_weight
                    if self.edge_weight is not None
                    else self.edge_index.new_ones(self.edge_index.size(1), dtype=torch.float32)
                )
                edges = gcn_norm(self.edge_index, weight, self.num_nodes, improved=True, add_self_loops=True)
            else:
                edges = traceable_gcn_norm(self.edge_index, self.edge_weight, self.num_nodes, self_loop_weight)
            index, weight = edges
            assert weight is not None
            self._gcn_edges[self_loop_weight] = index, weight
        return self._gcn_edges[self_loop_weight]

    def normalized_adjacency(self, self_loop_weight: float) -> tuple[Tensor, Tensor]:
        """:meth:`normalized_edges` as a CSR ``[N, N]`` matrix (rows receive) and its transpose."""
        if self_loop_weight not in self._gcn_adjacency:
            (src, dst), weight = self.normalized_edges(self_loop_weight)
            shape = (self.num_nodes, self.num_nodes)
            self._gcn_adjacency[self_loop_weight] = csr(dst, src, weight, shape), csr(src, dst, weight, shape)
        return self._gcn_adjacency[self_loop_weight]

    def gather_src(self, x: Tensor) -> Tensor:
        return x.index_select(0, self.src)

    def gather_dst(self, x: Tensor) -> Tensor:
        return x.index_select(0, self.dst)

    def scatter_dst(self, m: Tensor) -> Tensor:
        out = m.new_zeros((self.num_nodes, *m.shape[1:]))
        # in place into the fresh zeros, except under torch.func, whose vmap cannot write batched
        # rows into an unbatched tensor
        return out.index_add(0, self.dst, m) if transformed(m) else out.index_add_(0, self.dst, m)

    def gcn_propagate(self, x: Tensor, self_loop_weight: float = 1.0) -> Tensor:
        r""":math:`\hat D^{-1/2}(A + wI)\hat D^{-1/2} x`, :math:`w` = ``self_loop_weight``."""
        # gradient transforms of torch.func (vjp: the NTK callback) and torch.compile cannot take sparse
        # CSR tensors; vmap alone can, through the product's own vmap rule
        in_transform = transformed(x)
        if (in_transform and not only_vmapped()) or torch.compiler.is_compiling():
            (src, dst), weight = self.normalized_edges(self_loop_weight)
            messages = x.index_select(0, src) * weight.to(x.dtype).unsqueeze(-1)
            return x.new_zeros((self.num_nodes, *x.shape[1:])).index_add(0, dst, messages)
        matrix, transpose = self.normalized_adjacency(self_loop_weight)
        product = _SparseProduct if in_transform else _CsrProduct  # vmap's rule is _SparseProduct's
        return product.apply(x, self._as(matrix, x), self._as(transpose, x))

    @staticmethod
    def _as(matrix: Tensor, like: Tensor) -> Tensor:
        """``matrix`` in ``like``'s dtype (products need equal dtypes; float32 is built, others cast)."""
        return matrix if matrix.dtype == like.dtype else matrix.to(like.dtype)


@dataclass(frozen=True)
class _Built:
    """A plan and what it was built from: the tensors themselves (held, so never mistaken for new
    ones at a reused address), their version counters (bumped by in-place edits) and the node count."""

    plan: EdgePlan
    edge_index_version: int
    edge_weight_version: int | None

    def serves(self, edge_index: Tensor, num_nodes: int, edge_weight: Tensor | None) -> bool:
        plan = self.plan
        if plan.edge_index is not edge_index or plan.num_nodes != num_nodes or plan.edge_weight is not edge_weight:
            return False
        if edge_index._version != self.edge_index_version:
            return False
        return edge_weight is None or edge_weight._version == self.edge_weight_version


def _unversioned(tensor: Tensor) -> bool:
    """Inference tensors (made under ``torch.inference_mode``, as a loader's batches are during
    Lightning's evaluation) keep no version counter, so an in-place edit could not be told apart."""
    return tensor.is_inference()


class PlanMemo:
    """The :class:`EdgePlan` of the last batch, handed out again while the same ``edge_index`` tensor
    (the same object, unmodified, with the same node count and ``edge_weight`` object) comes back.

    Full-batch training and evaluation pass one graph every step; its GCN adjacency (``gcn_norm`` and
    two sorted CSR builds) took ~1.8 ms of a ~13 ms Cora GCN training step and more than half of an
    evaluation forward pass on 2 CPU cores. Mini-batches are new tensors and get new plans. The plan
    is reused as built, so results are bitwise those of a fresh plan.

    One plan per autograd mode: tensors made under ``torch.inference_mode`` (Lightning's evaluation)
    cannot take part in a backward pass. Never memoized: edge weights that require a gradient (the
    plan's normalized weights would carry the previous step's graph) and inference tensors, which
    keep no version counter (a loader's evaluation batches are new tensors anyway). Copies and
    pickles of a memo are empty, since sparse CSR tensors can be neither deep-copied nor pickled.
    """

    def __init__(self) -> None:
        self._built: dict[bool, _Built] = {}

    def plan(self, edge_index: Tensor, num_nodes: int, edge_weight: Tensor | None = None) -> EdgePlan:
        if _unversioned(edge_index) or (edge_weight is not None and (edge_weight.requires_grad or _unversioned(edge_weight))):
            return EdgePlan(edge_index, num_nodes, edge_weight)
        mode = torch.is_inference_mode_enabled()
        built = self._built.get(mode)
        if built is not None and built.serves(edge_index, num_nodes, edge_weight):
            return built.plan
        plan = EdgePlan(edge_index, num_nodes, edge_weight)
        self._built[mode] = _Built(plan, edge_index._version, None if edge_weight is None else edge_weight._version)
        return plan

    def __deepcopy__(self, memo: dict[int, object]) -> PlanMemo:
        return PlanMemo()

    def __reduce__(self) -> tuple[type[PlanMemo], tuple[()]]:
        return PlanMemo, ()
