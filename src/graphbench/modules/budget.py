"""Parameter budgets: size every model to the same number of parameters before comparing it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from graphbench.modules.network import count_parameters
from graphbench.vocabulary.errors import ArgumentError


@dataclass(frozen=True)
class SolvedWidth:
    hidden_dim: int
    num_params: int


def solve_width(
    build: Callable[[int], nn.Module],
    max_params: int,
    width_multiple: int = 1,
    max_width: int = 1 << 16,
    min_width: int = 1,
) -> SolvedWidth:
    r"""The largest hidden width :math:`d \ge` ``min_width`` (a multiple of ``width_multiple``) whose fully
    built model has :math:`P(d) \le` ``max_params`` parameters (``min_width``: the narrowest model that can be
    built, e.g. one channel beside a concatenated PE).

    :math:`P(d)` is counted on the real model (input and PE encoders, layers, norms, head), as
    Dwivedi et al. (2020) prescribe budgets of 100k/500k parameters. :math:`P` grows monotonically
    with :math:`d` for every model here, so the width is bracketed by doubling and then found by
    bisection, in :math:`O(\log d)` builds. Candidate models are built on PyTorch's ``meta`` device
    (shapes without storage), so even a far too wide candidate costs no memory.
    """
    if max_params < 1:
        raise ArgumentError(f"max_params={max_params} must be a positive integer")
    step = max(1, width_multiple)
    counts: dict[int, int] = {}

    def count(units: int) -> int:
        if units not in counts:
            with torch.device("meta"):
                counts[units] = count_parameters(build(units * step))
        return counts[units]

    first = max(1, -(-min_width // step))
    if count(first) > max_params:
        raise ArgumentError(
            f"max_params={max_params:,} is below the {count(first):,} parameters of even the narrowest model "
            f"(hidden_dim={first * step}): raise it, or build a smaller network (fewer layers)"
        )
    lo, limit = first, max(first, max_width // step)
    while lo < limit and count(min(2 * lo, limit)) <= max_params:
        lo = min(2 * lo, limit)
    hi = min(2 * lo, limit) if lo < limit else lo
    while lo < hi:  # the answer lies in [lo, hi], and count(lo) <= max_params
        mid = (lo + hi + 1) // 2
        if count(mid) <= max_params:
            lo = mid
        else:
            hi = mid - 1
    return SolvedWidth(hidden_dim=lo * step, num_params=count(lo))
