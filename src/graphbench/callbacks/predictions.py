"""The test split's raw predictions, gathered as the test loop produces them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import torch
from torch import Tensor

from graphbench.run.files import replace_atomically


def _numpy_ready(value: Tensor) -> Tensor:
    """``value`` on the host, half-precision floats (``bfloat16``, which NumPy lacks, and ``float16``
    from ``trainer.precision=bf16-mixed``/``16-mixed``) widened to ``float32``."""
    value = value.detach()
    if value.dtype in (torch.bfloat16, torch.float16):
        value = value.float()
    return value.cpu()


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
            self._parts.append({k: _numpy_ready(outputs[k]) for k in ("y_pred", "y_true", "index")})

    def on_test_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        keys = ("y_pred", "y_true", "index")
        parts = self._parts
        if trainer.world_size > 1 and torch.distributed.is_available() and torch.distributed.is_initialized():
            # every rank evaluated its own unpadded share (graphbench.data.store.sharding); objects,
            # not all_gather's tensors, since the shares may differ in size
            gathered: list[list[dict[str, Tensor]] | None] = [None] * trainer.world_size
            torch.distributed.all_gather_object(gathered, parts)
            parts = [part for rank_parts in gathered for part in rank_parts or []]
        if not parts:
            self.predictions = {}
            return
        joined = {k: torch.cat([part[k] for part in parts]) for k in keys}
        order = torch.argsort(joined["index"], stable=True)
        self.predictions = {k: v[order] for k, v in joined.items()}
        if torch.unique(joined["index"]).numel() != joined["index"].numel():
            raise RuntimeError("the test predictions hold an example twice: the test loader repeats examples across ranks")

    def save(self, path: Path) -> None:
        """The predictions as ``path`` (``.npz``), replaced atomically: a kill leaves the whole file or none."""
        arrays = {k: v.numpy() for k, v in self.predictions.items()}

        def write(tmp: Path) -> None:
            with open(tmp, "wb") as handle:
                np.savez(handle, **arrays)

        replace_atomically(path, write)
