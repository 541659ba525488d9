"""The test split's raw predictions, gathered as the test loop produces them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import torch
from torch import Tensor


class TestPredictions(L.Callback):
    """Collects what ``test_step`` returns (``y_pred``, ``y_true``, ``index`` per batch) and keeps
    them concatenated and sorted by dataset index in :attr:`predictions`, so that any metric, ensemble
    or paired test can be recomputed from ``predictions.npz`` (see :meth:`save`)."""

    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self) -> None:
        self.predictions: dict[str, Tensor] = {}
        self._parts: list[dict[str, Tensor]] = []

    def on_test_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._parts = []

    def on_test_batch_end(
        self, trainer: L.Trainer, pl_module: L.LightningModule, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        if isinstance(outputs, dict) and {"y_pred", "y_true", "index"} <= set(outputs):
            self._parts.append({k: outputs[k].detach().cpu() for k in ("y_pred", "y_true", "index")})

    def on_test_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if not self._parts:
            self.predictions = {}
            return
        joined = {k: torch.cat([part[k] for part in self._parts]) for k in ("y_pred", "y_true", "index")}
        order = torch.argsort(joined["index"], stable=True)
        self.predictions = {k: v[order] for k, v in joined.items()}

    def save(self, path: Path) -> None:
        np.savez(path, **{k: v.numpy() for k, v in self.predictions.items()})
