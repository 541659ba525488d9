r"""Dropout (Srivastava et al. 2014), :math:`y = x \odot m / (1 - p)` with :math:`m_k \sim
\mathrm{Bernoulli}(1 - p)`, whose CPU masks are drawn by :mod:`graphbench.modules.cpu_bernoulli`.

torch's ``F.dropout`` on CPU computes ``noise = empty_like(x).bernoulli_(1 - p)``, ``noise.div_(1 - p)``
and ``x * noise`` (ATen's ``_dropout_impl``; the fused ``native_dropout`` is taken on accelerators
only). :func:`dropout` computes the same three steps, with ``bernoulli_`` and ``div_`` replaced by one
pass of :func:`~graphbench.modules.cpu_bernoulli.fill_` that writes :math:`1 / (1 - p)` (rounded to
float32 by torch, as ``div_`` rounds it) where the mask is 1. Same generator state, same mask, same
product, same autograd graph (a ``mul`` saving the noise): outputs, gradients and every later random
draw equal ``F.dropout``'s bit for bit (tests/modules/test_dropout.py), about 6x faster per mask.

Everything else goes to ``F.dropout``: evaluation, ``p`` of 0 or 1, non-float32 or non-contiguous
input, other devices, ``torch.func`` transforms, ``inplace``, or a torch build on which
:func:`~graphbench.modules.cpu_bernoulli.available` does not hold.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from graphbench.modules import cpu_bernoulli
from graphbench.modules.propagation import transformed


def _takes_compiled_mask(x: Tensor) -> bool:
    return (
        x.device.type == "cpu"
        and x.dtype == torch.float32
        and x.layout == torch.strided
        and x.is_contiguous()
        and x.numel() > 0
        and not transformed(x)
        and cpu_bernoulli.available()
    )


def dropout(x: Tensor, p: float, training: bool = True, inplace: bool = False) -> Tensor:
    """``F.dropout(x, p, training, inplace)``, with the CPU mask drawn by the compiled kernel."""
    if inplace or not training or not 0.0 < p < 1.0 or not _takes_compiled_mask(x):
        return F.dropout(x, p, training, inplace)
    keep = 1.0 - p
    scale = torch.ones((), dtype=x.dtype).div_(keep).item()  # the float32 value torch's div_ stores
    noise = cpu_bernoulli.fill_(torch.empty_like(x), keep, scale)
    return x * noise


class Dropout(nn.Dropout):
    """``torch.nn.Dropout`` (same arguments and ``repr``) computing :func:`dropout`."""

    def forward(self, input: Tensor) -> Tensor:
        return dropout(input, self.p, self.training, self.inplace)
