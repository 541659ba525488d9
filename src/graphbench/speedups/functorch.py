"""Whether a tensor is inside a ``torch.func`` transform: torch answers it only through a private name."""

from __future__ import annotations

import torch
from torch import Tensor


def transformed(x: Tensor) -> bool:
    """Whether ``x`` is wrapped by a ``torch.func`` transform (``vmap``, ``vjp``: the NTK callback), or
    met inside one (an unbatched input of a ``vmap``-ed function: IGB's batched fits), where custom
    autograd functions and sparse CSR tensors cannot go. False while ``torch.compile`` traces (Dynamo
    handles ``torch.func`` itself, and cannot trace the private check)."""
    if torch.compiler.is_compiling():
        return False
    functorch = torch._C._functorch
    return bool(functorch.is_functorch_wrapped_tensor(x)) or functorch.peek_interpreter_stack() is not None
