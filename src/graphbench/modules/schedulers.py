"""Learning-rate schedules of the two protocols graphbench reproduces."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from torch.optim import Optimizer
from torch.optim.lr_scheduler import LambdaLR, ReduceLROnPlateau


@dataclass
class SchedulerSpec:
    """A scheduler in Lightning's dict form, plus the learning rate below which training stops."""

    lightning_config: dict[str, Any]
    stop_below_lr: float | None = None


def plateau(
    optimizer: Optimizer, *, monitor: str, mode: str, factor: float = 0.5, patience: int = 10, min_lr: float = 1e-5
) -> SchedulerSpec:
    r"""The Benchmarking GNNs protocol (Dwivedi et al., 2020): halve the learning rate (``factor``)
    when the validation metric has not improved for ``patience`` epochs, and stop training once the
    learning rate falls below ``min_lr``."""
    if mode not in ("min", "max"):
        raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
    scheduler = ReduceLROnPlateau(optimizer, mode=mode, factor=factor, patience=patience)
    return SchedulerSpec({"scheduler": scheduler, "monitor": monitor, "interval": "epoch"}, stop_below_lr=min_lr)


def cosine_with_warmup(optimizer: Optimizer, *, monitor: str, mode: str, warmup_epochs: int, max_epochs: int) -> SchedulerSpec:
    r"""The LRGB-tuned protocol (Tönshoff et al., 2023, after GraphGPS): per epoch :math:`t`,
    :math:`\eta_t = \eta \cdot \max(10^{-6}, t / w)` for :math:`t < w` (linear warmup from
    :math:`10^{-6}\eta`), then :math:`\eta_t = \eta \cdot \tfrac12\big(1 + \cos(\pi \frac{t - w}{T - w})\big)`
    down to 0 at :math:`T`: ``get_cosine_schedule_with_warmup`` of toenshoff/LRGB and GraphGPS
    (``graphgps/optimizer/extra_optimizers.py``, after Hugging Face's), stepped once per epoch.
    A time-based schedule: ``monitor`` and ``mode`` (given to every scheduler) are not used."""
    if warmup_epochs < 0 or max_epochs < 1:
        raise ValueError(f"need warmup_epochs >= 0 and max_epochs >= 1, got {warmup_epochs}, {max_epochs}")

    def factor(epoch: int) -> float:
        if epoch < warmup_epochs:
            return max(1e-6, epoch / warmup_epochs)
        progress = (epoch - warmup_epochs) / max(1, max_epochs - warmup_epochs)
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress))))

    return SchedulerSpec({"scheduler": LambdaLR(optimizer, factor), "interval": "epoch"})
