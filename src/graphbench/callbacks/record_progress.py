"""Keeps a run's record up to date epoch by epoch, so that every ending writes what is known."""

from __future__ import annotations

import lightning as L
from lightning.pytorch.callbacks import Callback

from graphbench.callbacks.history import EpochHistory
from graphbench.callbacks.resources import ResourceTracker
from graphbench.run.record import RunRecord


def epoch_metrics(epoch: dict[str, float]) -> dict[str, float]:
    """The ``train/*`` and ``val/*`` values of one history entry, without the ``*_best`` running maxima."""
    return {k: v for k, v in epoch.items() if k.startswith(("train/", "val/")) and not k.endswith("_best")}


def fill_from_history(record: RunRecord, history: EpochHistory, tracker: ResourceTracker | None = None) -> None:
    """Set ``record``'s ``epochs_trained``, ``history``, and, once a best epoch was checkpointed, its
    ``best_epoch`` and ``metrics`` (the ``train/*`` and ``val/*`` values of that epoch, without the
    ``*_best`` running maxima); ``time_per_epoch_s`` from ``tracker`` when given."""
    record.epochs_trained = len(history.epochs)
    record.history = [dict(epoch) for epoch in history.epochs]
    best = history.best_record()
    if best is not None:
        record.best_epoch = int(best["epoch"])
        record.metrics = epoch_metrics(best)
    if tracker is not None:
        record.time_per_epoch_s = tracker.time_per_epoch_s


class RecordProgress(Callback):
    """Fills ``record`` from ``history`` (:func:`fill_from_history`) however fit ends: when training ends
    (``on_train_end``: the last epoch, early stopping, a stop request) and when an exception leaves it
    (``on_exception``: Ctrl-C, SIGTERM, divergence, an error). However the run then ends, the run frame
    writes a ``results.json`` holding the epochs trained, the best epoch so far with its train/val
    metrics, and the history (of a resumed run, the restored epochs too).

    Both hooks run after every callback's ``on_train_epoch_end`` of the last epoch, so the record holds
    each epoch ``history`` recorded wherever this callback sits in the Trainer's list (Lightning calls
    the ``Checkpoint`` callbacks, ``history`` among them, after the others).
    """

    def __init__(self, record: RunRecord, history: EpochHistory, tracker: ResourceTracker | None = None) -> None:
        self.record = record
        self.history = history
        self.tracker = tracker

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        fill_from_history(self.record, self.history, self.tracker)

    def on_exception(self, trainer: L.Trainer, pl_module: L.LightningModule, exception: BaseException) -> None:
        fill_from_history(self.record, self.history, self.tracker)
