"""The epoch-by-epoch history of a run, and which epoch the best-model checkpoint kept."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any

import lightning as L
from lightning.pytorch.callbacks import Callback, Checkpoint, ModelCheckpoint

from graphbench.vocabulary.errors import ConfigError

log = logging.getLogger("graphbench.tasks.train")


class EpochHistory(Checkpoint):
    """Records ``{epoch, lr, train/*, val/*}`` after every training epoch, and the epoch whose
    weights ``checkpoint`` holds (``best_epoch``): the one ``ModelCheckpoint`` chose, ties and all.

    It derives from Lightning's ``Checkpoint`` marker class only for the order in which Lightning
    calls it: metric-monitoring callbacks run their ``on_train_epoch_end`` after the LightningModule's,
    where the epoch's training metrics are logged; Lightning puts them after every other callback and
    keeps their relative order, so this one also runs after ``checkpoint``, which must be given first.

    ``checkpoint``: by default the Trainer's first ``ModelCheckpoint`` that monitors a metric
    (:func:`best_checkpoint`), found when the Trainer sets up; ``monitor``: by default that
    checkpoint's. With ``echo``, each epoch is also logged as one line (the console's record: by
    default when no progress bar is shown:
    ``epoch 3/40  train/loss 0.4123  val/loss 0.5210  val/accuracy 0.9100  best 0.9300``), and an epoch that
    runs longer than ``progress_every_s`` seconds (``clock``'s) says how far it got that often:
    ``epoch 0/40: batch 120 of 543 (22%), 30.4 s``.
    """

    def __init__(
        self,
        checkpoint: ModelCheckpoint | None = None,
        monitor: str | None = None,
        echo: bool | None = None,
        progress_every_s: float = 30.0,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._checkpoint = checkpoint
        self._monitor = monitor
        self.echo = echo
        self.progress_every_s = progress_every_s
        self._clock = clock
        self._last_line = 0.0
        self.epochs: list[dict[str, float]] = []
        self.best_epoch: int | None = None
        self._best_path_seen: str = ""
        self._best_score_seen: float | None = None
        self._epoch_start = 0.0
        self._epoch_lr: float | None = None

    def state_dict(self) -> dict[str, Any]:
        """Kept in the full checkpoint (``last.ckpt``), so a resumed run continues its history."""
        return {
            "epochs": self.epochs,
            "best_epoch": self.best_epoch,
            "best_path_seen": self._best_path_seen,
            "best_score_seen": self._best_score_seen,
        }

    @property
    def checkpoint(self) -> ModelCheckpoint:
        """The checkpoint whose kept epoch this history records."""
        if self._checkpoint is None:
            raise ConfigError("callbacks.history records the epoch a ModelCheckpoint keeps, and the Trainer has none")
        return self._checkpoint

    @property
    def monitor(self) -> str:
        """The metric shown beside the losses in each epoch's line."""
        return self._monitor if self._monitor is not None else str(self.checkpoint.monitor)

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        if self._checkpoint is None:
            self._checkpoint = best_checkpoint(trainer.callbacks)
            if self._checkpoint is None:
                raise ConfigError(
                    "callbacks.history records the epoch a ModelCheckpoint with a monitor keeps (callbacks.checkpoint): "
                    "keep callbacks.checkpoint, or remove callbacks.history too (~callbacks.history)"
                )
        if self.echo is None:
            self.echo = trainer.progress_bar_callback is None

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.epochs = list(state_dict["epochs"])
        self.best_epoch = state_dict["best_epoch"]
        self._best_path_seen, self._best_score_seen = state_dict["best_path_seen"], state_dict["best_score_seen"]

    def on_train_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._epoch_start = self._last_line = self._clock()
        # the rate this epoch trains with: Lightning steps epoch-interval schedulers after the last batch,
        # before on_train_epoch_end
        self._epoch_lr = float(trainer.optimizers[0].param_groups[0]["lr"]) if trainer.optimizers else None

    def on_train_batch_end(
        self, trainer: L.Trainer, pl_module: L.LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        """With ``echo``, a line on the epoch's progress once ``progress_every_s`` passed since the last line."""
        now = self._clock()
        if not self.echo or now - self._last_line < self.progress_every_s:
            return
        self._last_line = now
        total = f"/{trainer.max_epochs}" if trainer.max_epochs is not None and trainer.max_epochs > 0 else ""
        batches = trainer.num_training_batches
        of = f" of {batches} ({100 * (batch_idx + 1) / batches:.0f}%)" if isinstance(batches, int) and batches > 0 else ""
        log.info("epoch %d%s: batch %d%s, %.1f s", trainer.current_epoch, total, batch_idx + 1, of, now - self._epoch_start)

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        record: dict[str, float] = {"epoch": trainer.current_epoch}
        if self._epoch_lr is not None:
            record["lr"] = self._epoch_lr
        record.update({k: float(v) for k, v in trainer.callback_metrics.items() if k.split("/")[0] in ("train", "val")})
        self.epochs.append(record)
        score = self.checkpoint.best_model_score
        score_value = None if score is None else float(score)
        if self.checkpoint.best_model_path and (
            self.checkpoint.best_model_path != self._best_path_seen or score_value != self._best_score_seen
        ):
            self.best_epoch = trainer.current_epoch
            self._best_path_seen, self._best_score_seen = self.checkpoint.best_model_path, score_value
        if self.echo:
            log.info("%s", self.format_line(record, trainer.max_epochs, self._clock() - self._epoch_start))

    def format_line(self, record: dict[str, float], max_epochs: int | None, seconds: float) -> str:
        total = f"/{max_epochs}" if max_epochs is not None and max_epochs > 0 else ""
        parts = [f"epoch {int(record['epoch'])}{total}"]
        for key in ("train/loss", "val/loss", self.monitor):
            if key in record:
                parts.append(f"{key} {record[key]:.4f}")
        best = self.checkpoint.best_model_score
        if best is not None and math.isfinite(float(best)):
            parts.append(f"best {float(best):.4f} (epoch {self.best_epoch})")
        parts.append(f"{seconds:.1f} s")
        return "  ".join(parts)

    def best_record(self) -> dict[str, float] | None:
        """The history entry of the checkpointed epoch, or ``None`` when nothing was checkpointed."""
        for record in self.epochs:
            if record["epoch"] == self.best_epoch:
                return record
        return None


def best_checkpoint(callbacks: list[Callback]) -> ModelCheckpoint | None:
    """The first ``ModelCheckpoint`` among ``callbacks`` that monitors a metric: the one whose epoch a
    run is tested at (``callbacks.checkpoint``)."""
    return next((c for c in callbacks if isinstance(c, ModelCheckpoint) and c.monitor is not None), None)
