"""The full training state that a resumed run continues from (``checkpoints/last.ckpt``): the state
between two epochs, written at most every so many seconds, when training ends, and when the run is
interrupted."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fsspec
import lightning as L

#: between writes of the file, the boundary kept in memory for an interruption is renewed once the
#: training since the previous one took this many times as long as serializing it did (5% at most)
HOLD_AFTER_COST: float = 20.0


class LastCheckpoint(L.Callback):
    """Writes the full state (weights, optimizer, schedulers, loops, every callback's state, RNG) to
    ``dirpath/filename.ckpt`` at a boundary between two epochs, from which a resumed run continues
    exactly as an uninterrupted one would have.

    The boundary is the start of a training epoch: by then Lightning has run the previous epoch's
    validation, its ``on_train_epoch_end`` hooks (best checkpoint, early-stopping counters, history) and
    its scheduler step, and has drawn nothing for the coming epoch. An epoch's end is not such a
    boundary: Lightning steps the epoch's schedulers after the ``on_train_epoch_end`` hooks, and a run
    resumed from there neither replays that step nor the skipped hooks' work, so a plateau reduction or
    a cosine step lands one epoch late. The file claims the epochs it holds as completed
    (``epoch`` = epochs done), as a checkpoint written when training ends does, so Lightning resumes
    it as the start of the next epoch.

    Writes happen at a boundary once ``every_s`` seconds have passed since the previous write (``0``:
    at every boundary) and when training ends. Between writes a boundary is kept in memory, and an
    interruption (Ctrl-C, SIGTERM, a preemption signal, any error) writes it. Serializing the state
    takes milliseconds, a noticeable share of a short full-batch epoch, so the boundary in memory is
    renewed only once the training since the previous one took :data:`HOLD_AFTER_COST` times as long as
    that serialization: an interrupted run loses the epoch it was in and a few short ones before it, a
    killed run (SIGKILL) at most ``every_s`` seconds. In a
    data-parallel run rank 0's clock decides for every rank, since a checkpoint is a collective step,
    and rank 0 alone writes.
    """

    def __init__(self, dirpath: Path | str, filename: str, every_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        if every_s < 0:
            raise ValueError(f"every_s must be >= 0 seconds, got {every_s}")
        self.dirpath = Path(dirpath)
        self.filename = filename
        self.every_s = every_s
        self.clock = clock
        self._written_at = self._held_at = clock()
        self._hold_cost_s = 0.0  # how long the last serialization into memory took
        self._first_epoch = 0
        self._written_epochs: int | None = None  # epochs done in the file on disk
        self._held: tuple[int, bytes] | None = None  # (epochs done, the serialized state) not yet on disk
        self._boundary_save = False
        self._stopped = False  # the state was saved after the run had been told to stop (early stopping)
        self._resume_stopped = False
        # a name of this process's in-memory file system, where a boundary's state is serialized
        self._memory_path = f"memory://graphbench-last-checkpoint/{uuid.uuid4().hex}.ckpt"

    @property
    def path(self) -> Path:
        """The file it writes: ``dirpath/filename.ckpt``."""
        return self.dirpath / f"{self.filename}.ckpt"

    def state_dict(self) -> dict[str, Any]:
        return {"stopped": self._stopped}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self._resume_stopped = bool(state_dict.get("stopped", False))

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._written_at = self._held_at = self.clock()
        self._first_epoch = trainer.current_epoch
        # a resumed run starts from the state its file holds
        self._written_epochs = trainer.current_epoch if trainer.current_epoch > 0 else None
        if self._resume_stopped:  # the run had stopped early: resuming it trains no further epoch
            trainer.should_stop = True

    def on_train_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if trainer.current_epoch == self._first_epoch:  # nothing trained since this fit started
            return
        now = self.clock()
        due, hold = trainer.strategy.broadcast(
            (now - self._written_at >= self.every_s, now - self._held_at >= HOLD_AFTER_COST * self._hold_cost_s)
        )
        if due:
            self._save(trainer, self.path)
            self._written_at = self._held_at = self.clock()
        elif hold:
            started = time.perf_counter()
            self._save(trainer, None)
            self._hold_cost_s = time.perf_counter() - started
            self._held_at = self.clock()

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """The state after the last epoch, unless the file holds it already (``fast_dev_run`` saves
        nothing)."""
        if trainer.fast_dev_run or self._written_epochs == trainer.current_epoch:
            return
        self._stopped = trainer.should_stop
        self._save(trainer, self.path)

    def on_exception(self, trainer: L.Trainer, pl_module: L.LightningModule, exception: BaseException) -> None:
        """Write the latest boundary kept in memory, if it is newer than the file. No collective step:
        the other ranks of a data-parallel run may be gone."""
        if self._held is None or not trainer.is_global_zero:
            return
        epochs, data = self._held
        if self._written_epochs is not None and self._written_epochs >= epochs:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".ckpt.partial")
        partial.write_bytes(data)
        os.replace(partial, self.path)
        self._written_epochs = epochs
        self._held = None

    def on_save_checkpoint(self, trainer: L.Trainer, pl_module: L.LightningModule, checkpoint: dict[str, Any]) -> None:
        """At an epoch's start Lightning has already counted the epoch as ready to run; the saved state
        is the boundary before it, so that count is taken back: a resumed run starts that epoch afresh,
        as it does after a checkpoint written when training ends."""
        if not self._boundary_save:
            return
        progress = checkpoint["loops"]["fit_loop"]["epoch_progress"]
        for counts in (progress["total"], progress["current"]):
            if counts["ready"] == counts["started"] + 1:
                counts["ready"] = counts["started"]

    def _save(self, trainer: L.Trainer, file: Path | None) -> None:
        """The full state into ``file``, or (``None``) into memory, held for :meth:`on_exception`."""
        self._boundary_save = True
        try:
            trainer.save_checkpoint(file if file is not None else self._memory_path, weights_only=False)
        finally:
            self._boundary_save = False
        if file is not None:
            self._written_epochs, self._held = trainer.current_epoch, None
        elif trainer.is_global_zero:
            memory = fsspec.filesystem("memory")
            with memory.open(self._memory_path, "rb") as handle:
                self._held = (trainer.current_epoch, handle.read())
            memory.rm(self._memory_path)
