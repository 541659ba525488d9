r"""Dropout (Srivastava et al. 2014), :math:`y = x \odot m / (1 - p)` with :math:`m_k \sim
\mathrm{Bernoulli}(1 - p)`, whose CPU masks are drawn by :mod:`graphbench.speedups.cpu_bernoulli`.

torch's ``F.dropout`` on CPU computes ``noise = empty_like(x).bernoulli_(1 - p)``, ``noise.div_(1 - p)``
and ``x * noise``, and saves the float ``noise`` for the backward ``grad * noise`` (ATen's
``_dropout_impl``; the fused ``native_dropout`` is taken on accelerators only). :func:`dropout`
draws the same mask from the same generator state as ``uint8``
(:func:`~graphbench.speedups.cpu_bernoulli.draw`) and computes both products in one compiled pass
each, multiplying by exactly the float32 values of ``noise``: :math:`s = 1 / (1 - p)` as torch's
``div_`` rounds it, or 0. Outputs, gradients and every later random draw equal ``F.dropout``'s bit
for bit (tests/speedups/test_dropout.py); the mask kept for the backward takes a quarter of the
memory (on the LRGB-tuned GCN, 21 MB less per layer at batch 200), and a mask is about 4x faster.

Everything else goes to ``F.dropout``: evaluation, ``p`` of 0 or 1, non-float32 or non-contiguous
input, input of fewer than :data:`MIN_ELEMENTS` elements (where the Python of a custom autograd
function costs more than the mask saves: on a 2-core Intel Xeon, one thread, forward and backward
took 82 µs with torch's mask against 111 µs at 5,192 elements, 117 against 123 µs at 10,384 and
295 against 198 µs at 30,208), other devices, ``torch.func`` transforms, ``torch.compile``, ``inplace``, or a torch build on which
:func:`~graphbench.speedups.cpu_bernoulli.available` does not hold. Under ``create_graph`` the
backward is torch's ``grad * noise``, itself differentiable.
"""

from __future__ import annotations

import numba
import numpy as np
import torch
from torch import Tensor, nn
from torch.nn import functional as F

from graphbench.speedups import cpu_bernoulli
from graphbench.speedups.functorch import transformed


@numba.njit(cache=True, nogil=True)
def _masked_scale(x, mask, scale, out):
    """``out = x * noise`` with ``noise = scale`` where ``mask`` is 1, else 0 (float32 products, as
    torch's ``mul``: ``x * 0`` keeps its sign, NaN and inf)."""
    zero = np.float32(0.0)
    for i in range(x.size):
        out[i] = x[i] * (scale if mask[i] else zero)
    return out


def _scaled(x: Tensor, mask: Tensor, scale: float) -> Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    _masked_scale(x.view(-1).numpy(), mask.numpy(), np.float32(scale), out.view(-1).numpy())
    return out


class _CompiledDropout(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: Tensor, keep: float, scale: float) -> Tensor:  # type: ignore[override]
        mask = cpu_bernoulli.draw(x.numel(), keep)
        ctx.save_for_backward(mask)
        ctx.scale = scale
        return _scaled(x, mask, scale)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None, None]:  # type: ignore[override]
        (mask,) = ctx.saved_tensors
        if torch.is_grad_enabled():  # create_graph: the gradient must itself be differentiable
            noise = mask.view(grad.shape).to(grad.dtype) * torch.tensor(ctx.scale, dtype=grad.dtype)
            return grad * noise, None, None
        return _scaled(grad, mask, ctx.scale), None, None


#: the smallest input (in elements) whose mask the compiled kernel draws
MIN_ELEMENTS: int = 1 << 14


def _takes_compiled_mask(x: Tensor) -> bool:
    return (
        x.numel() >= MIN_ELEMENTS
        and x.device.type == "cpu"
        and x.dtype == torch.float32
        and x.layout == torch.strided
        and x.is_contiguous()
        and x.numel() > 0
        and not transformed(x)
        and not torch.compiler.is_compiling()  # a compiled graph draws its masks itself
        and cpu_bernoulli.available()
    )


def dropout(x: Tensor, p: float, training: bool = True, inplace: bool = False) -> Tensor:
    """``F.dropout(x, p, training, inplace)``, with the CPU mask drawn by the compiled kernel."""
    if inplace or not training or not 0.0 < p < 1.0 or not _takes_compiled_mask(x):
        return F.dropout(x, p, training, inplace)
    keep = 1.0 - p
    scale = torch.ones((), dtype=x.dtype).div_(keep).item()  # the float32 value torch's div_ stores
    return _CompiledDropout.apply(x, keep, scale)


class Dropout(nn.Dropout):
    """``torch.nn.Dropout`` (same arguments and ``repr``) computing :func:`dropout`."""

    def forward(self, input: Tensor) -> Tensor:
        return dropout(input, self.p, self.training, self.inplace)
