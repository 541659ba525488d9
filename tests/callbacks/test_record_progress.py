"""RecordProgress: the record follows the epoch history, so every ending of fit writes what is known; a plain
callback, it reads the history after the last epoch's hooks wherever it sits in the Trainer's list."""

from __future__ import annotations

from pathlib import Path

import lightning as L
import pytest
import torch
from lightning.pytorch.callbacks import Callback, Checkpoint, ModelCheckpoint
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from graphbench.callbacks.history import EpochHistory
from graphbench.callbacks.record_progress import RecordProgress, epoch_metrics, fill_from_history
from graphbench.run.record import RUNNING, RunRecord

EPOCHS = [
    {"epoch": 0, "lr": 0.01, "train/loss": 0.9, "val/loss": 0.8, "val/accuracy": 0.50, "val/accuracy_best": 0.50},
    {"epoch": 1, "lr": 0.01, "train/loss": 0.7, "val/loss": 0.6, "val/accuracy": 0.75, "val/accuracy_best": 0.75},
    {"epoch": 2, "lr": 0.01, "train/loss": 0.6, "val/loss": 0.7, "val/accuracy": 0.70, "val/accuracy_best": 0.75},
]


def history_of(epochs: list[dict[str, float]], best_epoch: int | None) -> EpochHistory:
    history = EpochHistory(ModelCheckpoint(monitor="val/accuracy", mode="max"), "val/accuracy")
    history.epochs = [dict(e) for e in epochs]
    history.best_epoch = best_epoch
    return history


def test_fills_epochs_best_epoch_its_metrics_and_history() -> None:
    record = RunRecord(status=RUNNING, config={})
    fill_from_history(record, history_of(EPOCHS, best_epoch=1))
    assert record.epochs_trained == 3
    assert record.best_epoch == 1
    assert record.metrics == {"train/loss": 0.7, "val/loss": 0.6, "val/accuracy": 0.75}
    assert record.history == EPOCHS
    assert record.history[0] is not EPOCHS[0]


def test_before_any_checkpoint_only_the_epochs_are_known() -> None:
    record = RunRecord(status=RUNNING, config={})
    fill_from_history(record, history_of(EPOCHS[:1], best_epoch=None))
    assert (record.epochs_trained, record.best_epoch, record.metrics) == (1, None, {})
    assert record.history == EPOCHS[:1]


def test_the_tested_metrics_are_the_train_and_val_values_without_running_maxima() -> None:
    assert epoch_metrics(EPOCHS[2]) == {"train/loss": 0.6, "val/loss": 0.7, "val/accuracy": 0.70}


def test_the_end_of_training_and_an_exception_each_fill_every_epoch_recorded() -> None:
    """Ctrl-C after ``history`` recorded an epoch: ``on_exception`` fills it, as ``on_train_end`` does."""
    record = RunRecord(status=RUNNING, config={})
    history = history_of(EPOCHS[:2], best_epoch=1)
    progress = RecordProgress(record, history)
    assert isinstance(progress, Callback) and not isinstance(progress, Checkpoint)
    progress.on_train_end(None, None)  # type: ignore[arg-type]  # neither is read
    assert record.epochs_trained == 2
    history.epochs.append(dict(EPOCHS[2]))
    progress.on_exception(None, None, KeyboardInterrupt())  # type: ignore[arg-type]
    assert record.epochs_trained == 3 and record.history == EPOCHS


class Regression(L.LightningModule):
    """A linear fit of 8 points that logs ``train/loss`` and ``val/loss``; ``fail_at``: the epoch whose start raises."""

    def __init__(self, fail_at: int | None = None) -> None:
        super().__init__()
        self.layer = nn.Linear(1, 1)
        self.fail_at = fail_at
        self.data = TensorDataset(torch.linspace(0, 1, 8).view(-1, 1), torch.linspace(1, 3, 8).view(-1, 1))

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        loss = nn.functional.mse_loss(self.layer(batch[0]), batch[1])
        self.log("train/loss", loss, on_epoch=True, on_step=False)
        return loss

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        self.log("val/loss", nn.functional.mse_loss(self.layer(batch[0]), batch[1]))

    def on_train_epoch_start(self) -> None:
        if self.current_epoch == self.fail_at:
            raise RuntimeError("stop")

    def train_dataloader(self) -> DataLoader:
        return DataLoader(self.data, batch_size=8)

    def val_dataloader(self) -> DataLoader:
        return DataLoader(self.data, batch_size=8)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.1)


@pytest.mark.parametrize("fail_at", [None, 2])
def test_in_a_trainer_the_record_holds_every_epoch_however_fit_ends(tmp_path: Path, fail_at: int | None) -> None:
    """Placed before the checkpoint and the history it reads: the record still holds the last epoch."""
    record = RunRecord(status=RUNNING, config={})
    checkpoint = ModelCheckpoint(dirpath=tmp_path, monitor="val/loss", mode="min")
    history = EpochHistory(checkpoint, echo=False)
    trainer = L.Trainer(
        max_epochs=3,
        callbacks=[RecordProgress(record, history), checkpoint, history],
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
    )
    if fail_at is None:
        trainer.fit(Regression())
    else:
        with pytest.raises(RuntimeError, match="stop"):
            trainer.fit(Regression(fail_at))
    epochs = 3 if fail_at is None else fail_at
    assert record.epochs_trained == epochs and [e["epoch"] for e in record.history] == list(range(epochs))
    assert record.best_epoch == history.best_epoch == epochs - 1  # the loss falls every epoch
    assert record.metrics == epoch_metrics(record.history[-1])
