r"""Dense layers :math:`y = x W^\top + b` whose CPU matrix products run on oneDNN.

torch's ``F.linear`` on CPU calls MKL's ``sgemm``. On a CPU that is not Intel's, MKL takes its
generic code path: on this project's AMD EPYC (AVX2) ``MKL_VERBOSE`` reports "Intel(R) Architecture
processors", where an Intel CPU gets its AVX2 or AVX-512 kernels. oneDNN, which torch bundles,
dispatches on the instruction set alone; its linear, ``torch.ops.mkldnn._linear_pointwise`` (the op
torch's Inductor compiles CPU linears to), computes the same product. On the EPYC, two threads,
``[31000, F] @ [F, F]``: 27.0 ms against MKL's 39.0 ms at F = 236, 13.1 against 20.6 at F = 159,
4.7 against 8.0 at F = 95. That is why :func:`linear` does not simply call ``F.linear``.

:func:`linear` takes a sparse CSR input (IGB's fits on raw bag-of-words features) through one sparse
product, :class:`_SparseRowsProduct`, on any device, inside ``vmap`` too. It takes the oneDNN path for 2-D float32 CPU inputs outside ``torch.func`` transforms,
CPU autocast and ``torch.compile`` (which cannot lower this op; it emits its own); everything else goes to ``F.linear``. Its backward computes
:math:`\partial L/\partial x = g W` on oneDNN as well (a linear with weight :math:`W^\top`),
:math:`\partial L/\partial W = g^\top x` with torch's ``mm`` (MKL was as fast as oneDNN there) and
:math:`\partial L/\partial b = \sum_n g_n`; under ``create_graph`` it differentiates through torch's
own ops instead, so higher derivatives stay exact. Results equal ``F.linear``'s up to float summation
order (tests/speedups/test_linear.py).
"""

from __future__ import annotations

import warnings
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn import functional as F
from torch_geometric.nn.dense.linear import Linear as PyGLinear

from graphbench.speedups.functorch import only_vmapped, transformed

_ONEDNN = torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")


def _onednn_linear(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    return torch.ops.mkldnn._linear_pointwise(x, weight, bias, "none", [], "")


class _OneDnnLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(x, weight)
        return _onednn_linear(x, weight, bias)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:  # type: ignore[override]
        x, weight = ctx.saved_tensors
        need_x, need_weight, need_bias = ctx.needs_input_grad
        grad = grad.contiguous()
        grad_x = grad_weight = grad_bias = None
        if need_x:
            # under create_graph the gradient must itself be differentiable: torch's mm is
            # oneDNN reorders the transposed view as it would its contiguous copy (the same values,
            # tests/speedups/test_linear.py), without the copy
            grad_x = grad.mm(weight) if torch.is_grad_enabled() else _onednn_linear(grad, weight.t(), None)
        if need_weight:
            grad_weight = grad.t().mm(x)
        if need_bias:  # False when there is no bias
            grad_bias = grad.sum(0)
        return grad_x, grad_weight, grad_bias


class _SparseRowsProduct(torch.autograd.Function):
    r""":math:`x W^\top` for a sparse CSR :math:`x \in \mathbb{R}^{N \times D}` (raw bag-of-words
    features: Cora's are 1.3% non-zero), with :math:`\partial L/\partial W = (x^\top g)^\top` from the
    CSR ``transpose``; no gradient flows to :math:`x` (data). Under ``vmap`` over :math:`K` weights
    (IGB's batched fits) the products share :math:`x`: one product with the weights side by side,
    :math:`x [W_1 \cdots W_K]^\top`, where a dense batched product would multiply :math:`K` copies of
    :math:`x`'s zeros."""

    @staticmethod
    def forward(x: Tensor, weight: Tensor, transpose: Tensor) -> Tensor:  # type: ignore[override]
        return torch.sparse.mm(x, weight.t().contiguous())

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Tensor, Tensor, Tensor], output: Tensor) -> None:
        ctx.transpose = inputs[2]

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[None, Tensor, None]:  # type: ignore[override]
        return None, torch.sparse.mm(ctx.transpose, grad.contiguous()).t(), None

    @staticmethod
    def vmap(
        info: Any, in_dims: tuple[None, int | None, None], x: Tensor, weight: Tensor, transpose: Tensor
    ) -> tuple[Tensor, int | None]:
        if in_dims[1] is None:
            return _SparseRowsProduct.apply(x, weight, transpose), None
        stacked = weight.movedim(in_dims[1], 0)  # [K, out, in]
        count, out_dim = stacked.shape[:2]
        product = _SparseRowsProduct.apply(x, stacked.reshape(count * out_dim, -1), transpose)
        return product.view(x.size(0), count, out_dim), 1


class _TransposeMemo:
    """The CSR transpose of the last sparse input, kept while the same tensor comes back (a full-batch
    fit passes one feature matrix every step)."""

    def __init__(self) -> None:
        self._last: tuple[Tensor, Tensor] | None = None

    def of(self, x: Tensor) -> Tensor:
        if self._last is None or self._last[0] is not x:
            with warnings.catch_warnings():  # "sparse CSR support is in beta": the products are tested
                warnings.simplefilter("ignore")
                self._last = x, x.t().to_sparse_csr()
        return self._last[1]


_TRANSPOSES = _TransposeMemo()


def _sparse_rows_linear(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    out = _SparseRowsProduct.apply(x, weight, _TRANSPOSES.of(x))
    return out if bias is None else out + bias


def _takes_onednn(x: Tensor, weight: Tensor, bias: Tensor | None) -> bool:
    if not _ONEDNN or x.dim() != 2 or x.device.type != "cpu" or torch.is_autocast_enabled("cpu"):
        return False
    if torch.compiler.is_compiling():  # Inductor compiles F.linear to this product itself
        return False
    tensors = (x, weight) if bias is None else (x, weight, bias)
    if any(t.dtype != torch.float32 or t.layout != torch.strided for t in tensors):
        return False
    # torch.func (vmap, vjp: the NTK callback) wraps tensors that a custom op cannot unwrap
    return not any(transformed(t) for t in tensors)


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    r""":math:`x W^\top + b`, as ``F.linear(x, weight, bias)``; oneDNN's product for 2-D float32 CPU input."""
    if x.layout == torch.sparse_csr and (not transformed(weight) or only_vmapped()):
        return _sparse_rows_linear(x, weight, bias)
    if _takes_onednn(x, weight, bias):
        return _OneDnnLinear.apply(x.contiguous(), weight.contiguous(), bias)
    return F.linear(x, weight, bias)


class Linear(nn.Linear):
    """``torch.nn.Linear`` (same parameters, names and initialization) computed by :func:`linear`."""

    def forward(self, x: Tensor) -> Tensor:
        return linear(x, self.weight, self.bias)


class OneDnnPyGLinear(PyGLinear):
    """PyG's :class:`~torch_geometric.nn.dense.linear.Linear` (``GCNConv.lin`` and the like; same
    parameters, names and initialization) computed by :func:`linear`."""

    def forward(self, x: Tensor) -> Tensor:
        return linear(x, self.weight, self.bias)
