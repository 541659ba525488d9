"""DivergenceGuard stops at the first training step whose loss is not finite (on the CPU), or at the end
of its epoch (on an accelerator, with no host sync per step)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import torch

from graphbench.callbacks import divergence
from graphbench.callbacks.divergence import DivergenceGuard
from graphbench.vocabulary.errors import Diverged


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


def test_on_an_accelerator_the_epoch_end_reads_the_steps_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(divergence, "read_every_step", lambda loss: False)  # as a CUDA loss is read
    trainer = SimpleNamespace(current_epoch=5)
    guard = DivergenceGuard()
    guard.on_train_epoch_start(trainer, None)  # type: ignore[arg-type]
    for loss in (torch.tensor(1.0), torch.tensor(float("nan")), torch.tensor(2.0)):
        guard.on_train_batch_end(trainer, None, {"loss": loss}, None, 0)  # type: ignore[arg-type]  # no raise, no read
    with pytest.raises(Diverged, match="the training loss is not finite at epoch 5"):
        guard.on_train_epoch_end(trainer, None)  # type: ignore[arg-type]
    guard.on_train_epoch_start(trainer, None)  # type: ignore[arg-type]
    guard.on_train_batch_end(trainer, None, torch.tensor([0.5, 1.0]), None, 0)  # type: ignore[arg-type]
    guard.on_train_epoch_end(trainer, None)  # type: ignore[arg-type]  # finite: goes on
    guard.on_train_epoch_end(trainer, None)  # type: ignore[arg-type]  # an epoch without steps: nothing to read
