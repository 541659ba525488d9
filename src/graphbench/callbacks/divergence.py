"""Stop a run whose loss is no longer a number, and say at which epoch."""

from __future__ import annotations

import math
from typing import Any

import lightning as L
import torch

from graphbench.run.errors import Diverged


def _finite(value: torch.Tensor) -> bool:
    """Whether every entry of ``value`` is finite. A scalar (every loss here) is read as one Python
    float: on CPU that costs a tenth of ``torch.isfinite(...).all()``'s two kernel calls, every step."""
    if value.numel() == 1:
        return math.isfinite(value.item())
    return bool(torch.isfinite(value).all())


class DivergenceGuard(L.Callback):
    """Raises :class:`Diverged` at the first training step whose loss is not finite, and after a
    validation epoch whose ``val/loss`` is not finite; training on would only burn compute on NaNs."""

    def on_train_batch_end(
        self, trainer: L.Trainer, pl_module: L.LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        loss = outputs.get("loss") if isinstance(outputs, dict) else outputs
        if isinstance(loss, torch.Tensor) and not _finite(loss.detach()):
            raise Diverged(trainer.current_epoch, "the training loss")

    def on_validation_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if trainer.sanity_checking:
            return
        value = trainer.callback_metrics.get("val/loss")
        if value is not None and not math.isfinite(float(value)):
            raise Diverged(trainer.current_epoch, "the validation loss")
