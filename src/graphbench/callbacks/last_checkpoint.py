"""The full training state that a resumed run continues from (``checkpoints/last.ckpt``), written
at epoch ends at most every so many seconds."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lightning as L
from lightning.pytorch.callbacks import ModelCheckpoint


class LastCheckpoint(ModelCheckpoint):
    """Writes the full state (weights, optimizer, loops, callbacks, RNG) to ``dirpath/filename.ckpt``
    at the end of a training epoch once ``every_s`` seconds have passed since the previous write
    (``0``: every epoch), and when training ends.

    Only epoch ends are written, so a run resumed from the file repeats what followed it and ends
    with the numbers of an uninterrupted run (:class:`graphbench.callbacks.rng_state.RNGState`); a
    killed run loses at most ``every_s`` seconds of training. Writing every epoch costs a full
    serialization and a file replacement per epoch: on Cora a GCN epoch trains in ~11 ms and its
    checkpoint took ~2.4 ms to write, and the kernel's write-back of the replaced file then competed
    with the next epochs for the CPU. In a data-parallel run rank 0's clock decides for every rank,
    since writing a checkpoint is a collective step.
    """

    def __init__(self, dirpath: Path, filename: str, every_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(
            dirpath=dirpath,
            filename=filename,
            monitor=None,
            save_top_k=1,
            save_weights_only=False,
            save_on_train_epoch_end=True,
            enable_version_counter=False,
        )
        if every_s < 0:
            raise ValueError(f"every_s must be >= 0 seconds, got {every_s}")
        self.every_s = every_s
        self.clock = clock
        self._written_at = clock()
        # ModelCheckpoint derives its key from settings fixed above, and Lightning reads it at each
        # callback hook call (~7 a training step); the key stays what ModelCheckpoint makes of them
        self._state_key = super().state_key

    @property
    def path(self) -> Path:
        """The file it writes: ``dirpath/filename.ckpt``."""
        return Path(str(self.dirpath)) / f"{self.filename}{self.FILE_EXTENSION}"

    @property
    def state_key(self) -> str:
        return self._state_key

    def on_train_batch_end(self, *args: Any, **kwargs: Any) -> None:
        """Nothing: only epoch ends are written (ModelCheckpoint would check its step and time
        triggers here, which this callback leaves off)."""

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._written_at = self.clock()

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        due = trainer.strategy.broadcast(self.clock() - self._written_at >= self.every_s)
        if due:
            super().on_train_epoch_end(trainer, pl_module)
            self._written_at = self.clock()

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """The state after the last epoch, unless its epoch end was written already."""
        if not self._should_skip_saving_checkpoint(trainer):
            self._save_topk_checkpoint(trainer, self._monitor_candidates(trainer))
