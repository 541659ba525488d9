"""RecordProgress: the record follows the epoch history, so every ending writes what is known."""

from __future__ import annotations

from lightning.pytorch.callbacks import ModelCheckpoint

from graphbench.callbacks.history import EpochHistory
from graphbench.callbacks.record_progress import RecordProgress, fill_from_history
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


def test_an_exception_fills_the_epoch_that_ended_just_before_it() -> None:
    """Ctrl-C after ``history`` recorded an epoch but before this callback's epoch end ran."""
    record = RunRecord(status=RUNNING, config={})
    history = history_of(EPOCHS[:2], best_epoch=1)
    progress = RecordProgress(record, history)
    progress.on_train_epoch_end(None, None)  # type: ignore[arg-type]  # neither is read
    history.epochs.append(dict(EPOCHS[2]))
    progress.on_exception(None, None, KeyboardInterrupt())  # type: ignore[arg-type]
    assert record.epochs_trained == 3 and record.history == EPOCHS
