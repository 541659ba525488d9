"""Stop a run whose loss is no longer a number, and say at which epoch."""

from __future__ import annotations

import math
from typing import Any

import lightning as L
import torch

from graphbench.vocabulary.errors import Diverged


def _finite(value: torch.Tensor) -> bool:
    """Whether every entry of ``value`` is finite. A scalar (every loss here) is read as one Python
    float: on CPU that costs a tenth of ``torch.isfinite(...).all()``'s two kernel calls, every step."""
    if value.numel() == 1:
        return math.isfinite(value.item())
    return bool(torch.isfinite(value).all())


def read_every_step(loss: torch.Tensor) -> bool:
    """Whether a step's loss is read as it comes: on the CPU, where reading waits for nothing; on an
    accelerator the read would make the host wait for the step's kernels, every step."""
    return loss.device.type == "cpu"


class DivergenceGuard(L.Callback):
    """Raises :class:`Diverged` when a training loss is not finite, and after a validation epoch whose
    ``val/loss`` is not finite; training on would only burn compute on NaNs. A loss on the CPU is
    read at its step; on an accelerator the steps' finiteness is accumulated on the device, without
    a host sync, and read once, when the training epoch ends (its validation, which runs before,
    stops the run first when the weights are no longer finite)."""

    def __init__(self) -> None:
        self._all_finite: torch.Tensor | None = None  # the epoch's accelerator losses so far: all finite

    def on_train_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._all_finite = None

    def on_train_batch_end(
        self, trainer: L.Trainer, pl_module: L.LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        loss = outputs.get("loss") if isinstance(outputs, dict) else outputs
        if not isinstance(loss, torch.Tensor):
            return
        loss = loss.detach()
        if read_every_step(loss):
            if not _finite(loss):
                raise Diverged(trainer.current_epoch, "the training loss")
            return
        finite = torch.isfinite(loss).all()
        self._all_finite = finite if self._all_finite is None else self._all_finite & finite

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        all_finite, self._all_finite = self._all_finite, None
        if all_finite is not None and not bool(all_finite):
            raise Diverged(trainer.current_epoch, "the training loss")

    def on_validation_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if trainer.sanity_checking:
            return
        value = trainer.callback_metrics.get("val/loss")
        if value is not None and not math.isfinite(float(value)):
            raise Diverged(trainer.current_epoch, "the validation loss")
