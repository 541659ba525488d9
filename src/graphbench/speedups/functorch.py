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


def only_vmapped() -> bool:
    """Whether ``torch.func`` transforms are active and every one of them is a ``vmap`` (no ``grad``,
    ``vjp`` or ``jvp`` level): where a custom autograd function with a ``vmap`` rule may take sparse
    CSR tensors (IGB's batched fits), which a gradient transform cannot wrap (the NTK callback)."""
    from torch._C._functorch import TransformType
    from torch._functorch.pyfunctorch import retrieve_all_functorch_interpreters

    interpreters = retrieve_all_functorch_interpreters()
    return bool(interpreters) and all(i.key() == TransformType.Vmap for i in interpreters)
