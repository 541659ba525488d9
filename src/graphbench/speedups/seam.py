"""The seam between graphbench's plain networks and the speed-ups (see :mod:`graphbench.speedups`):
:func:`apply`, :func:`run_scope`, :func:`profiler` and :func:`compile_network`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn
from torch.optim import Optimizer
from torch_geometric.nn.dense.linear import Linear as PyGLinear

from graphbench.speedups import result_moves
from graphbench.speedups.dropout import Dropout
from graphbench.speedups.fused_optimizer import fused
from graphbench.speedups.linear import Linear, OneDnnPyGLinear
from graphbench.speedups.quiet_profiler import QuietProfiler
from graphbench.vocabulary.errors import ArgumentError

#: the values of ``speedups`` (conf/speedups/<name>.yaml)
CHOICES: tuple[str, ...] = ("auto", "off")
#: the values of ``model.compile_mode``: ``torch.compile``'s modes
COMPILE_MODES: tuple[str, ...] = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
#: compiled graphs kept per forward with static shapes: two (training, evaluation) per bucket, and room to spare
RECOMPILE_LIMIT = 64

#: plain class -> the subclass that computes its forward with a speed-up kernel (exact types only:
#: a subclass of these, e.g. ``nn.MultiheadAttention``'s projection, may compute its own way)
_SWAPS: dict[type[nn.Module], type[nn.Module]] = {nn.Linear: Linear, PyGLinear: OneDnnPyGLinear, nn.Dropout: Dropout}


def apply(network: nn.Module) -> nn.Module:
    """Swaps the speed-up kernels into ``network`` in place (see the module docstring) and returns it."""
    for module in network.modules():
        swapped = _SWAPS.get(type(module))
        if swapped is not None:
            module.__class__ = swapped
    return network


def optimizer(
    make: Callable[[Iterable[nn.Parameter]], Optimizer], mixed_precision: bool
) -> Callable[[Iterable[nn.Parameter]], Optimizer]:
    """The ``optimizer`` group's ``parameters -> optimizer`` with Adam and AdamW fused
    (:mod:`~graphbench.speedups.fused_optimizer`; not under ``mixed_precision``)."""
    return fused(make, mixed_precision)


def compile_network(network: nn.Module, static_shapes: bool = False, mode: str = "default") -> nn.Module:
    """``network`` with its forward compiled by ``torch.compile`` in ``mode`` (:data:`COMPILE_MODES`), in
    place (``nn.Module.compile``): parameters and ``state_dict`` keys stay unprefixed, so checkpoints of
    compiled and eager runs load into either. Compilation happens at the first call of each shape.

    Without ``static_shapes`` the forward is compiled with ``dynamic=True`` (graph batches change their
    node and edge counts every step). With ``static_shapes`` (batches padded to a few buckets,
    ``dataset.pad_to=buckets``) it is compiled with ``dynamic=False`` and ``fullgraph=True``: one graph,
    without a break, per bucket and per mode (training, evaluation), each specialized to its shapes;
    up to :data:`RECOMPILE_LIMIT` of them are kept. ``mode="reduce-overhead"`` replays each such graph
    as a CUDA graph on a GPU: every call then starts a new CUDA-graph step
    (``torch.compiler.cudagraph_mark_step_begin``) and returns a copy of the output, which the next
    replay would overwrite.

    Speed-up kernels that :func:`apply` swapped in fall back to torch's ops while Inductor traces, and
    Inductor draws its own dropout masks: with dropout the losses follow another random stream than
    eager's; without, they equal eager's up to float summation order."""
    if mode not in COMPILE_MODES:
        raise ArgumentError(f"mode={mode!r} is not one of {list(COMPILE_MODES)}")
    if not static_shapes:
        network.compile(dynamic=True, mode=mode)
        return network
    torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, RECOMPILE_LIMIT)
    network.compile(dynamic=False, fullgraph=True, mode=mode)
    if mode == "reduce-overhead":
        compiled = network._compiled_call_impl

        def replay(*args: Any, **kwargs: Any) -> Any:
            torch.compiler.cudagraph_mark_step_begin()
            return compiled(*args, **kwargs).clone()

        network._compiled_call_impl = replay
    return network


@contextmanager
def run_scope(enabled: bool) -> Iterator[None]:
    """The run-scoped speed-ups, in place inside the block when ``enabled`` and undone after it."""
    if not enabled:
        yield
        return
    with result_moves.installed():
        yield


def profiler(enabled: bool) -> QuietProfiler | None:
    """The profiler a Trainer gets when the config names none: the quiet one when ``enabled``,
    otherwise None (Lightning's own default)."""
    return QuietProfiler() if enabled else None
