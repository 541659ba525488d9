"""ParameterBudget refuses, at the start of fitting, a model with more trainable parameters than its budget."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from graphbench.callbacks.parameter_budget import ParameterBudget
from graphbench.vocabulary.errors import ConfigError


def network() -> nn.Module:
    """2,002 trainable parameters (a 1000 -> 2 linear layer) and 5 frozen ones, which do not count."""
    module = nn.Module()
    module.linear = nn.Linear(1000, 2)
    module.frozen = nn.Parameter(torch.zeros(5), requires_grad=False)
    return module


def fit_start(max_params: int | None) -> None:
    ParameterBudget(max_params).on_fit_start(None, network())  # type: ignore[arg-type]


@pytest.mark.parametrize("max_params", [2002, 500_000, None])
def test_a_model_within_its_budget_or_without_one_trains(max_params: int | None) -> None:
    fit_start(max_params)


def test_a_model_over_its_budget_is_refused_with_one_line_naming_both_counts() -> None:
    with pytest.raises(ConfigError) as raised:
        fit_start(2001)
    message = str(raised.value)
    assert message == (
        "the model has 2,002 parameters, over the budget of 2,001. "
        "Let the budget solve the width (model.hidden_dim is then ignored) or choose budget=none."
    )
    assert "\n" not in message
