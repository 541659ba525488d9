"""The width solver on models whose parameter count is known in closed form."""

from __future__ import annotations

import pytest
from torch import nn

from graphbench.modules.budget import solve_width
from graphbench.run.errors import ConfigError


def two_layer(width: int) -> nn.Module:
    # P(d) = (10 d + d) + (d * 3 + 3) = 14 d + 3
    return nn.Sequential(nn.Linear(10, width), nn.Linear(width, 3))


def quadratic(width: int) -> nn.Module:
    # P(d) = d^2 + d
    return nn.Linear(width, width)


def test_linear_count_exact_answer() -> None:
    solved = solve_width(two_layer, 1000)
    assert (solved.hidden_dim, solved.num_params) == (71, 14 * 71 + 3)  # 14*72+3 = 1011 > 1000


def test_quadratic_count_and_width_multiple() -> None:
    solved = solve_width(quadratic, 10_000, width_multiple=8)
    assert solved.hidden_dim == 96 and solved.num_params == 96 * 96 + 96  # 104^2+104 = 10920 > 10000


def test_budget_exactly_met() -> None:
    assert solve_width(two_layer, 14 * 50 + 3).hidden_dim == 50


def test_too_small_budget_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="narrowest model"):
        solve_width(two_layer, 10)


def test_candidates_are_built_without_memory() -> None:
    sizes = []

    def recording(width: int) -> nn.Module:
        module = quadratic(width)
        sizes.append((width, module.weight.device.type))
        return module

    solve_width(recording, 10_000_000)
    assert all(device == "meta" for _, device in sizes)
    assert max(w for w, _ in sizes) <= 2 * 3162  # never more than twice the answer
