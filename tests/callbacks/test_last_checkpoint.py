"""LastCheckpoint writes the full state at epoch ends at most every ``every_s`` seconds, and when
training ends."""

from __future__ import annotations

from pathlib import Path

import lightning as L
import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader

from graphbench.callbacks.last_checkpoint import LastCheckpoint


class Line(L.LightningModule):
    """One parameter fitted to one batch: one optimizer step per epoch."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.zeros(1))

    def training_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
        return ((self.w - batch) ** 2).sum()

    def train_dataloader(self) -> DataLoader[torch.Tensor]:
        return DataLoader(torch.ones(1, 1), batch_size=1)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.1)


class Tick(L.Callback):
    """A clock that reads one more second at every epoch start."""

    def __init__(self) -> None:
        self.now = 0.0

    def on_train_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.now += 1.0


def fit(tmp_path: Path, every_s: float, epochs: int, module: L.LightningModule | None = None) -> tuple[LastCheckpoint, list[int]]:
    """Trains ``module`` (a :class:`Line` by default) ``epochs`` epochs; returns the callback and the
    global step of each write."""
    tick = Tick()
    last = LastCheckpoint(tmp_path, "last", every_s=every_s, clock=lambda: tick.now)
    written: list[int] = []
    save = last._save_checkpoint

    def recorded(trainer: L.Trainer, filepath: str) -> None:
        written.append(trainer.global_step)
        save(trainer, filepath)

    last._save_checkpoint = recorded  # type: ignore[method-assign]
    trainer = L.Trainer(
        max_epochs=epochs,
        callbacks=[tick, last],
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
        default_root_dir=tmp_path,
    )
    trainer.fit(module if module is not None else Line())
    return last, written


def test_every_epoch_end_is_written_with_no_interval(tmp_path: Path) -> None:
    _, written = fit(tmp_path, every_s=0, epochs=4)
    assert written == [1, 2, 3, 4]  # the end of training is the last epoch's end: not written twice


def test_epoch_ends_are_written_once_the_interval_passed_and_the_final_state_at_the_end(tmp_path: Path) -> None:
    # epoch e ends at clock e + 1; the clock was 0 when training started
    _, written = fit(tmp_path, every_s=2.5, epochs=5)
    assert written == [3, 5]  # epoch 2 (3 s after the start), then the end of training
    state = torch.load(tmp_path / "last.ckpt", weights_only=False)
    assert state["global_step"] == 5 and state["epoch"] == 5  # the epoch counter, past the last epoch (4)


def test_a_long_interval_writes_only_the_final_state(tmp_path: Path) -> None:
    _, written = fit(tmp_path, every_s=1e9, epochs=3)
    assert written == [3]


def test_a_negative_interval_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="every_s must be >= 0 seconds, got -1"):
        LastCheckpoint(tmp_path, "last", every_s=-1)


def test_the_state_key_is_the_one_model_checkpoint_derives(tmp_path: Path) -> None:
    # the key names the callback's state in a checkpoint: resuming needs it unchanged
    from lightning.pytorch.callbacks import ModelCheckpoint

    last = LastCheckpoint(tmp_path, "last", every_s=0)
    assert last.state_key == ModelCheckpoint.state_key.fget(last)  # type: ignore[attr-defined]
    assert last.state_key.startswith("LastCheckpoint{")


def test_steps_within_an_epoch_write_nothing(tmp_path: Path) -> None:
    class ThreeSteps(Line):
        def train_dataloader(self) -> DataLoader[torch.Tensor]:
            return DataLoader(torch.ones(3, 1), batch_size=1)

    _, written = fit(tmp_path, every_s=0, epochs=2, module=ThreeSteps())
    assert written == [3, 6]
