"""Chooses torch's intra-op thread count for training at the first training batch, when the size of a
step is known (:func:`graphbench.run.threads.training_threads`)."""

from __future__ import annotations

import logging
from typing import Any

import lightning as L
from lightning.pytorch.callbacks import Callback

from graphbench.run import threads
from graphbench.run.record import RunRecord
from graphbench.run.threads import ThreadChoice

log = logging.getLogger(__name__)


class TrainingThreads(Callback):
    """Sets the thread count at the first training batch from ``setting`` (the config key ``threads``),
    the batch's node count and the network's ``width``, with ``processes`` runs' processes sharing the
    node's CPUs; prints the choice, keeps it in ``choice`` and in ``record``'s provenance (under
    ``threads.training``) when a record is given. The count is saved in checkpoints: a
    resumed run trains on the threads it started with, so its sums run in the same order."""

    def __init__(self, setting: str | int, width: int, processes: int = 1, record: RunRecord | None = None) -> None:
        self.setting = setting
        self.record = record
        self.width = width
        self.processes = processes
        self.choice: ThreadChoice | None = None
        self._restored: int | None = None

    def on_train_batch_start(self, trainer: L.Trainer, pl_module: L.LightningModule, batch: Any, batch_idx: int) -> None:
        if self.choice is not None:
            return
        nodes = getattr(batch, "num_nodes", None)
        choice = threads.training_threads(
            self.setting,
            int(nodes) if nodes is not None else None,
            self.width,
            self.processes,
            on_accelerator=pl_module.device.type != "cpu",
        )
        if self._restored is not None and choice.source == "auto" and choice.threads != self._restored:
            choice = ThreadChoice(
                self._restored,
                "auto",
                f"as the run chose before it was resumed; {choice.reason}",
                choice.allowance,
                choice.wait_policy,
            )
        threads.apply(choice)
        self.choice = choice
        if self.record is not None and self.record.provenance is not None:
            self.record.provenance.threads["training"] = choice.to_dict()
        log.info("threads for training: %s", choice.describe())

    def state_dict(self) -> dict[str, Any]:
        return {"threads": self.choice.threads if self.choice is not None else None}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        restored = state_dict.get("threads")
        self._restored = int(restored) if restored is not None else None
