"""The seam between graphbench's plain networks and the speed-ups (see :mod:`graphbench.speedups`):
:func:`apply`, :func:`run_scope`, :func:`profiler` and :func:`compile_network`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from torch import nn
from torch_geometric.nn.dense.linear import Linear as PyGLinear

from graphbench.speedups import result_moves
from graphbench.speedups.dropout import Dropout
from graphbench.speedups.linear import Linear, OneDnnPyGLinear
from graphbench.speedups.quiet_profiler import QuietProfiler

#: the values of ``speedups`` (conf/speedups/<name>.yaml)
CHOICES: tuple[str, ...] = ("auto", "off")

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


def compile_network(network: nn.Module) -> nn.Module:
    """``network`` with its forward compiled by ``torch.compile(dynamic=True)`` (graph batches change
    their node and edge counts every step), in place (``nn.Module.compile``): parameters and
    ``state_dict`` keys stay unprefixed, so checkpoints of compiled and eager runs load into either.
    Compilation happens at the first call. Speed-up kernels that :func:`apply` swapped in fall back to
    torch's ops while Inductor traces, and Inductor draws its own dropout masks: with dropout the
    losses follow another random stream than eager's; without, they equal eager's up to float
    summation order."""
    network.compile(dynamic=True)
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
