"""LastCheckpoint writes the full state at the boundary between two epochs, at most every ``every_s``
seconds, when training ends and when training is interrupted; a run resumed from it logs what the
uninterrupted run logs."""

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
    """A clock that reads ``step`` more seconds at every epoch start."""

    def __init__(self, step: float = 1.0) -> None:
        self.now = 0.0
        self.step = step

    def on_train_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.now += self.step


def fit(
    tmp_path: Path, every_s: float, epochs: int, module: L.LightningModule | None = None, epoch_s: float = 1.0
) -> tuple[LastCheckpoint, list[tuple[int, str]]]:
    """Trains ``module`` (a :class:`Line` by default) ``epochs`` epochs of ``epoch_s`` seconds each on
    the callback's clock; returns the callback and, for each save, the global step and where it went
    (``file`` or ``memory``)."""
    tick = Tick(epoch_s)
    last = LastCheckpoint(tmp_path, "last", every_s=every_s, clock=lambda: tick.now)
    saves: list[tuple[int, str]] = []
    save = last._save

    def recorded(trainer: L.Trainer, file: Path | None) -> None:
        saves.append((trainer.global_step, "memory" if file is None else "file"))
        save(trainer, file)

    last._save = recorded  # type: ignore[method-assign]
    trainer = L.Trainer(
        max_epochs=epochs,
        callbacks=[tick, last],
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
        enable_checkpointing=False,  # the file LastCheckpoint writes is the only one
        default_root_dir=tmp_path,
    )
    trainer.fit(module if module is not None else Line())
    return last, saves


def files(saves: list[tuple[int, str]]) -> list[int]:
    return [step for step, where in saves if where == "file"]


def test_every_boundary_is_written_with_no_interval(tmp_path: Path) -> None:
    _, saves = fit(tmp_path, every_s=0, epochs=4)
    assert saves == [(1, "file"), (2, "file"), (3, "file"), (4, "file")]  # epochs 1-3's starts, then the end


def test_boundaries_are_written_once_the_interval_passed_and_held_in_memory_between(tmp_path: Path) -> None:
    # epoch e starts at clock e + 1; the clock was 0 when training started
    _, saves = fit(tmp_path, every_s=2.5, epochs=5)
    assert saves == [(1, "memory"), (2, "file"), (3, "memory"), (4, "memory"), (5, "file")]
    state = torch.load(tmp_path / "last.ckpt", weights_only=False)
    assert state["global_step"] == 5 and state["epoch"] == 5  # epochs done


def test_a_boundary_file_claims_its_epochs_as_completed(tmp_path: Path) -> None:
    tick = Tick()
    last = LastCheckpoint(tmp_path, "last", every_s=0, clock=lambda: tick.now)
    trainer = L.Trainer(
        max_epochs=3,
        callbacks=[tick, last],
        logger=False,
        enable_progress_bar=False,
        limit_val_batches=0,
        enable_checkpointing=False,
    )
    with pytest.raises(RuntimeError, match="stop in epoch 2"):
        trainer.fit(FailsAt(epoch=2))
    state = torch.load(last.path, weights_only=False)
    progress = state["loops"]["fit_loop"]["epoch_progress"]
    assert state["epoch"] == 2 and state["global_step"] == 2
    assert progress["total"] == {"ready": 2, "started": 2, "processed": 2, "completed": 2}


def test_the_boundary_in_memory_is_renewed_only_after_training_that_outlasts_its_serialization(tmp_path: Path) -> None:
    # epochs of a nanosecond: after the first boundary, the serialization it cost is never outweighed
    _, saves = fit(tmp_path, every_s=1e9, epochs=5, epoch_s=1e-9)
    assert saves == [(1, "memory"), (5, "file")]


def test_a_long_interval_writes_only_the_final_state(tmp_path: Path) -> None:
    _, saves = fit(tmp_path, every_s=1e9, epochs=3)
    assert files(saves) == [3]


def test_a_negative_interval_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="every_s must be >= 0 seconds, got -1"):
        LastCheckpoint(tmp_path, "last", every_s=-1)


def test_steps_within_an_epoch_write_nothing(tmp_path: Path) -> None:
    class ThreeSteps(Line):
        def train_dataloader(self) -> DataLoader[torch.Tensor]:
            return DataLoader(torch.ones(3, 1), batch_size=1)

    _, saves = fit(tmp_path, every_s=0, epochs=2, module=ThreeSteps())
    assert saves == [(3, "file"), (6, "file")]


class Scheduled(Line):
    """:class:`Line` under a scheduler stepped at every epoch's end (a plateau scheduler on the
    epoch's loss, which reduces the rate every second epoch, or a step decay), recording each epoch's
    rate and weight; it raises in the first step of ``fail_epoch``."""

    def __init__(self, kind: str, fail_epoch: int | None = None) -> None:
        super().__init__()
        self.kind, self.fail_epoch = kind, fail_epoch
        self.seen: list[tuple[int, float, float]] = []

    def training_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
        if self.current_epoch == self.fail_epoch:
            raise RuntimeError(f"stop in epoch {self.fail_epoch}")
        loss = ((self.w - batch) ** 2).sum()
        self.log("fit_loss", loss, on_epoch=True, on_step=False)
        return loss

    def on_train_epoch_end(self) -> None:
        self.seen.append((self.current_epoch, self.trainer.optimizers[0].param_groups[0]["lr"], float(self.w)))

    def configure_optimizers(self):  # type: ignore[no-untyped-def]
        optimizer = torch.optim.SGD(self.parameters(), lr=0.4)
        if self.kind == "plateau":  # no loss counts as an improvement (threshold 10 in relative mode)
            scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=1, threshold=10.0)
        else:
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "monitor": "fit_loss"}}


def scheduled_fit(module: Scheduled, last: LastCheckpoint, tick: Tick, ckpt_path: Path | None = None) -> None:
    trainer = L.Trainer(
        max_epochs=6,
        callbacks=[tick, last],
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
        enable_checkpointing=False,
    )
    trainer.fit(module, ckpt_path=ckpt_path)


@pytest.mark.parametrize("every_s", [0.0, 1e9], ids=["written-every-epoch", "written-when-interrupted"])
@pytest.mark.parametrize("kind", ["plateau", "step"])
def test_a_run_resumed_after_an_interruption_continues_as_the_uninterrupted_run(
    tmp_path: Path, kind: str, every_s: float
) -> None:
    tick = Tick()  # one second an epoch: the boundary in memory is renewed at every epoch
    reference = Scheduled(kind)
    scheduled_fit(reference, LastCheckpoint(tmp_path / "reference", "last", every_s=0), tick)
    assert len({lr for _, lr, _ in reference.seen}) >= 3  # the rate changes several times

    interrupted = Scheduled(kind, fail_epoch=3)
    last = LastCheckpoint(tmp_path / "run", "last", every_s=every_s, clock=lambda: tick.now)
    with pytest.raises(RuntimeError, match="stop in epoch 3"):
        scheduled_fit(interrupted, last, tick)
    assert torch.load(last.path, weights_only=False)["epoch"] == 3
    resumed = Scheduled(kind)
    again = LastCheckpoint(tmp_path / "run", "last", every_s=every_s, clock=lambda: tick.now)
    scheduled_fit(resumed, again, tick, ckpt_path=last.path)
    assert interrupted.seen + resumed.seen == reference.seen


class FailsAt(Line):
    """:class:`Line` that raises in the first step of epoch ``epoch``."""

    def __init__(self, epoch: int) -> None:
        super().__init__()
        self.fail_epoch = epoch

    def training_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
        if self.current_epoch == self.fail_epoch:
            raise RuntimeError(f"stop in epoch {self.fail_epoch}")
        return super().training_step(batch, batch_idx)
