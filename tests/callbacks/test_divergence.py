"""DivergenceGuard stops at the first training step whose loss is not finite."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import torch

from graphbench.callbacks.divergence import DivergenceGuard
from graphbench.run.errors import Diverged


def batch_end(outputs: Any) -> None:
    trainer = SimpleNamespace(current_epoch=3)
    DivergenceGuard().on_train_batch_end(trainer, None, outputs, None, 0)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_loss_that_is_not_finite_stops_the_run_at_its_epoch(value: float) -> None:
    loss = torch.tensor(value, requires_grad=True) * 1.0
    with pytest.raises(Diverged, match="the training loss is not finite at epoch 3"):
        batch_end({"loss": loss})
    with pytest.raises(Diverged):
        batch_end(loss)


def test_one_entry_that_is_not_finite_stops_a_loss_of_several_entries() -> None:
    with pytest.raises(Diverged):
        batch_end(torch.tensor([0.5, float("nan"), 1.0]))
    batch_end(torch.tensor([0.5, 2.0, 1.0]))


def test_finite_losses_and_skipped_steps_go_on() -> None:
    batch_end({"loss": torch.tensor(1e30)})
    batch_end(torch.tensor([[0.25]]))
    batch_end(None)
