"""EpochHistory records ``{epoch, lr, train/*, val/*}`` of every training epoch and the epoch whose weights
the best-model checkpoint holds, in either direction of the monitored metric and across a resume."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import lightning as L
import pytest
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from torch import nn
from torch.utils.data import DataLoader

from graphbench.callbacks.history import EpochHistory

BEST = "/run/checkpoints/best.ckpt"


def epoch_end(history: EpochHistory, epoch: int, metrics: dict[str, float], best_score: float | None) -> None:
    """The end of training epoch ``epoch``, logged ``metrics``, after which ``history.checkpoint`` holds the
    weights scoring ``best_score`` at ``BEST`` (the one path of ``filename=best``), or nothing when ``None``."""
    history.checkpoint.best_model_path = "" if best_score is None else BEST
    history.checkpoint.best_model_score = None if best_score is None else torch.tensor(best_score)
    optimizer = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.05)
    metrics_now = {key: torch.tensor(value) for key, value in metrics.items()}
    trainer = SimpleNamespace(current_epoch=epoch, optimizers=[optimizer], callback_metrics=metrics_now, max_epochs=4)
    history.on_train_epoch_start(trainer, None)  # type: ignore[arg-type]
    history.on_train_epoch_end(trainer, None)  # type: ignore[arg-type]


def new_history(echo: bool = False) -> EpochHistory:
    return EpochHistory(ModelCheckpoint(monitor="val/accuracy", mode="max"), "val/accuracy", echo=echo)


def test_an_epoch_records_its_lr_and_its_train_and_val_metrics_only() -> None:
    history = new_history()
    logged = {"train/loss": 0.75, "val/loss": 0.5, "val/accuracy": 0.625, "test/accuracy": 0.25, "lr-SGD": 0.05, "loss": 1.0}
    epoch_end(history, 0, logged, best_score=0.625)
    assert history.epochs == [{"epoch": 0, "lr": 0.05, "train/loss": 0.75, "val/loss": 0.5, "val/accuracy": 0.625}]


def test_the_best_epoch_moves_only_when_the_checkpoint_keeps_new_weights() -> None:
    history = new_history()
    epoch_end(history, 0, {"val/accuracy": 0.5}, best_score=None)  # nothing checkpointed yet
    assert history.best_epoch is None and history.best_record() is None
    epoch_end(history, 1, {"val/accuracy": 0.5}, best_score=0.5)
    epoch_end(history, 2, {"val/accuracy": 0.5}, best_score=0.5)  # a tie: the checkpoint kept epoch 1's weights
    assert history.best_epoch == 1
    epoch_end(history, 3, {"val/accuracy": 0.75}, best_score=0.75)
    assert history.best_epoch == 3
    assert history.best_record() == {"epoch": 3, "lr": 0.05, "val/accuracy": 0.75}


def test_a_resumed_history_continues_and_keeps_the_checkpoints_best_epoch() -> None:
    before = new_history()
    epoch_end(before, 0, {"val/accuracy": 0.75}, best_score=0.75)
    epoch_end(before, 1, {"val/accuracy": 0.5}, best_score=0.75)
    resumed = new_history()
    resumed.load_state_dict(before.state_dict())
    # the restored checkpoint still holds epoch 0's weights: epoch 2 is not the best for being the first after resume
    epoch_end(resumed, 2, {"val/accuracy": 0.5}, best_score=0.75)
    assert resumed.best_epoch == 0
    assert [record["epoch"] for record in resumed.epochs] == [0, 1, 2]
    assert [record["epoch"] for record in before.epochs] == [0, 1]  # the saved list is not the resumed one


def test_an_echoed_epoch_is_one_log_line_with_the_monitor_and_the_best_so_far(caplog: pytest.LogCaptureFixture) -> None:
    readings = iter([10.0, 11.5])  # the epoch starts at 10 s and ends at 11.5 s
    history = EpochHistory(
        ModelCheckpoint(monitor="val/accuracy", mode="max"), "val/accuracy", echo=True, clock=lambda: next(readings)
    )
    with caplog.at_level(logging.INFO, logger="graphbench.tasks.train"):
        epoch_end(history, 2, {"train/loss": 0.41234, "val/loss": 0.521, "val/accuracy": 0.91}, best_score=0.93)
    assert caplog.messages == ["epoch 2/4  train/loss 0.4123  val/loss 0.5210  val/accuracy 0.9100  best 0.9300 (epoch 2)  1.5 s"]


@pytest.mark.parametrize(
    ("max_epochs", "best", "line"),
    [(-1, None, "epoch 5  val/accuracy 0.5000  0.2 s"), (None, float("nan"), "epoch 5  val/accuracy 0.5000  0.2 s")],
)
def test_a_line_without_an_epoch_limit_or_a_finite_best_omits_them(max_epochs: int | None, best: float | None, line: str) -> None:
    history = new_history()
    history.checkpoint.best_model_score = None if best is None else torch.tensor(best)
    assert history.format_line({"epoch": 5, "val/accuracy": 0.5}, max_epochs, 0.2) == line


class Scripted(L.LightningModule):
    """Logs ``val/score`` = ``scores[epoch]``: one training and one validation batch per epoch."""

    def __init__(self, scores: list[float]) -> None:
        super().__init__()
        self.scores = scores
        self.w = nn.Parameter(torch.zeros(1))

    def training_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
        loss = ((self.w - batch) ** 2).sum()
        self.log("train/loss", loss, on_step=False, on_epoch=True)
        return loss

    def validation_step(self, batch: torch.Tensor, batch_idx: int) -> None:
        self.log("val/score", self.scores[self.current_epoch])

    def train_dataloader(self) -> DataLoader[torch.Tensor]:
        return DataLoader(torch.ones(1, 1), batch_size=1)

    def val_dataloader(self) -> DataLoader[torch.Tensor]:
        return DataLoader(torch.ones(1, 1), batch_size=1)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.5)


@pytest.mark.parametrize(("mode", "best_epoch"), [("max", 1), ("min", 3)])
def test_in_a_fit_the_best_epoch_is_the_checkpointed_one_in_the_monitors_direction(
    mode: str, best_epoch: int, tmp_path: Path
) -> None:
    """The project's checkpoint (``filename=best``, one kept): the first of tied scores is kept, and the
    history, given after the checkpoint, sees each epoch's choice."""
    scores = [0.5, 0.75, 0.75, 0.25]
    checkpoint = ModelCheckpoint(
        dirpath=tmp_path, filename="best", monitor="val/score", mode=mode, save_weights_only=True, enable_version_counter=False
    )
    history = EpochHistory(checkpoint, "val/score")
    trainer = L.Trainer(
        max_epochs=4,
        callbacks=[checkpoint, history],
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        default_root_dir=tmp_path,
    )
    trainer.fit(Scripted(scores))
    assert [record["val/score"] for record in history.epochs] == scores
    assert [record["epoch"] for record in history.epochs] == [0, 1, 2, 3]
    assert all(record["lr"] == 0.5 and "train/loss" in record for record in history.epochs)
    assert history.best_epoch == best_epoch
    assert history.best_record() == history.epochs[best_epoch]


def test_a_long_epoch_says_how_far_it_got_every_progress_interval(caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    history = EpochHistory(
        ModelCheckpoint(monitor="val/accuracy", mode="max"),
        "val/accuracy",
        echo=True,
        progress_every_s=30.0,
        clock=lambda: now[0],
    )
    trainer = SimpleNamespace(current_epoch=2, optimizers=[], max_epochs=40, num_training_batches=200)
    history.on_train_epoch_start(trainer, None)  # type: ignore[arg-type]
    with caplog.at_level(logging.INFO, logger="graphbench.tasks.train"):
        for batch_idx, seconds in enumerate([10.0, 29.0, 31.0, 45.0, 62.0]):
            now[0] = 100.0 + seconds
            history.on_train_batch_end(trainer, None, None, None, batch_idx)  # type: ignore[arg-type]
    assert [r.getMessage() for r in caplog.records] == [
        "epoch 2/40: batch 3 of 200 (2%), 31.0 s",
        "epoch 2/40: batch 5 of 200 (2%), 62.0 s",
    ]
    caplog.clear()
    quiet = EpochHistory(
        ModelCheckpoint(monitor="val/accuracy"), "val/accuracy", echo=False, progress_every_s=0.0, clock=lambda: now[0]
    )
    quiet.on_train_epoch_start(trainer, None)  # type: ignore[arg-type]
    quiet.on_train_batch_end(trainer, None, None, None, 0)  # type: ignore[arg-type]
    assert caplog.records == []  # a progress bar shows it already
