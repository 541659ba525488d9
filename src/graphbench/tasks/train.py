"""The ``train`` task: build data and model from the config, fit, test at the best validation epoch,
and write ``results.json`` and ``predictions.npz`` into the run directory.

Whatever happens, the run ends with a truthful ``status`` in ``results.json`` (see
:mod:`graphbench.run.record`): ``completed``, ``failed: <one line>``, ``diverged at epoch N``,
``pruned at epoch N`` (a trial of an Optuna search that its pruner stopped, tested at its best epoch
all the same), ``interrupted`` (Ctrl-C) or ``preempted`` (SIGTERM). :func:`train` never raises for a run that went
wrong; the caller maps the status to an exit code with :func:`graphbench.run.record.exit_code`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import lightning as L
import torch
from lightning.pytorch.callbacks import Callback, Checkpoint, ModelCheckpoint
from omegaconf import DictConfig, OmegaConf

from graphbench import speedups
from graphbench.build.callbacks import build_callbacks
from graphbench.build.data import build_datamodule
from graphbench.build.loggers import open_loggers
from graphbench.build.model import prepared_model
from graphbench.build.trainer import build_trainer
from graphbench.callbacks.history import EpochHistory, best_checkpoint
from graphbench.callbacks.last_checkpoint import LastCheckpoint
from graphbench.callbacks.ntk import NTKAlignment
from graphbench.callbacks.optuna_pruning import OptunaPruning
from graphbench.callbacks.predictions import TestPredictions
from graphbench.callbacks.record_progress import RecordProgress, epoch_metrics, fill_from_history
from graphbench.callbacks.resources import ResourceTracker, reset_peak_memory
from graphbench.callbacks.threads import TrainingThreads
from graphbench.config.checks import check_config
from graphbench.data.datamodules import DataModule
from graphbench.run.checkpoints import CHECKPOINTS, check_checkpoint_file
from graphbench.run.distributed import cluster_plugins, launch_context, processes_per_node
from graphbench.run.frame import RunFrame, completed_run, record_raw_files, run_frame
from graphbench.run.record import RunRecord
from graphbench.run.signals import Preempted
from graphbench.run.threads import threads_setting
from graphbench.vocabulary.errors import ConfigError, Pruned

log = logging.getLogger(__name__)

CallbackT = TypeVar("CallbackT", bound=Callback)


def train(cfg: DictConfig, overrides: Sequence[str] = (), checkpoint: str = "best") -> RunRecord:
    """Run one experiment; returns its record, which is also in ``<paths.output_dir>/results.json``.
    ``overrides``: Hydra's task overrides, recorded in the run's provenance. ``checkpoint``
    (``task.checkpoint``): test the weights of the ``best`` validation epoch or of the ``last`` epoch.
    A DDP rank other than 0 (started by graphbench, SLURM or torchrun) does the same work in a frame
    that writes nothing: only the ``frame.writer`` logs and writes files."""
    check_task(checkpoint, cfg.get("ckpt_path"))  # before the run claims its directory: a wrong path writes nothing
    if (done := completed_run(cfg)) is not None:  # resume=auto skips a completed run, on every rank
        return done
    with run_frame(cfg, overrides) as frame:
        record = frame.record
        check_config(cfg)
        reset_peak_memory()  # the peak of this run, not of an earlier one in this process (an in-process multirun)
        L.seed_everything(cfg.seed, workers=True, verbose=False)
        datamodule = prepared_data(cfg, record)
        module = prepared_model(cfg, datamodule, record)
        parts = RunCallbacks.of(build_callbacks(cfg))
        at_last = tests_last_epoch(cfg, parts, checkpoint)
        resume_from, resumed_epoch = resume_point(frame, parts.last)
        if frame.writer:
            open_loggers(cfg, record, frame.loggers, resumed_epoch)
        processes = local_processes(cfg)
        threads = TrainingThreads(threads_setting(cfg.get("threads")), record.hidden_dim or 1, processes, record)
        with (
            launch_context(cfg, processes, frame.output_dir, resume=resume_from is not None),
            speedups.run_scope(cfg.speedups.enabled),
        ):
            callbacks = [*parts.trainer_callbacks(record), threads]
            arguments = {"plugins": cluster_plugins(), **parts.trainer_arguments(resume_from)}
            trainer = build_trainer(cfg, callbacks, frame.loggers, str(frame.output_dir), **arguments)
            with frame.signals.lightning_loop():
                trainer.fit(module, datamodule=datamodule, ckpt_path=str(resume_from) if resume_from else None)
            raise_if_stopped(trainer)
            if parts.history is not None:  # also when the resumed checkpoint held every epoch and fit ran no hook
                fill_from_history(record, parts.history, parts.tracker)
            tested_epoch = parts.tested_epoch(at_last, datamodule.info.monitor)
            with frame.signals.lightning_loop():
                tested = trainer.test(module, datamodule=datamodule, ckpt_path=parts.tested_path(at_last), verbose=False)
            raise_if_stopped(trainer)
        record_results(record, parts, tested_epoch, tested[0], module)
        if frame.writer and parts.predictions is not None:
            parts.predictions.save(frame.output_dir / "predictions.npz")
        if parts.pruning is not None and parts.pruning.pruned_epoch is not None:  # tested and recorded as any run
            raise Pruned(parts.pruning.pruned_epoch)
    return frame.record


def check_task(checkpoint: str, ckpt_path: str | None) -> None:
    """``task.checkpoint`` is one of :data:`~graphbench.run.checkpoints.CHECKPOINTS`, and ``ckpt_path``
    (weights to start from) a readable checkpoint file when given: one :class:`ConfigError` line each."""
    if checkpoint not in CHECKPOINTS:
        raise ConfigError(f"task.checkpoint={checkpoint!r} is not valid; valid: {list(CHECKPOINTS)}")
    if ckpt_path:
        check_checkpoint_file(ckpt_path)


def local_processes(cfg: DictConfig) -> int:
    """The run's DDP processes on this node (1 without a DDP strategy)."""
    trainer_cfg = OmegaConf.to_container(cfg.trainer, resolve=True)
    assert isinstance(trainer_cfg, dict)
    return processes_per_node(trainer_cfg)


def prepared_data(cfg: DictConfig, record: RunRecord) -> DataModule:
    """The DataModule of ``cfg``, checked against the run's processes, prepared and set up for fitting;
    ``record`` gets the MD5s of the raw files it read."""
    datamodule = build_datamodule(cfg)
    datamodule.check_devices(local_processes(cfg) * int(cfg.trainer.get("num_nodes") or 1))
    datamodule.prepare_data()
    datamodule.setup("fit")
    record_raw_files(record, datamodule)
    return datamodule


def tests_last_epoch(cfg: DictConfig, parts: RunCallbacks, checkpoint: str) -> bool:
    """Whether the run tests the weights of its last epoch: under ``task.checkpoint=last``, or
    Lightning's ``fast_dev_run``, which saves no checkpoint (the one epoch it runs is tested with its
    weights). Testing the best epoch needs the checkpoint that keeps it: one :class:`ConfigError` line."""
    at_last = bool(cfg.trainer.get("fast_dev_run")) or checkpoint == "last"
    if parts.checkpoint is None and not at_last:
        raise ConfigError(
            "task.checkpoint=best tests the weights that callbacks.checkpoint keeps: keep callbacks.checkpoint, "
            "or set task.checkpoint=last"
        )
    return at_last


@dataclass
class RunCallbacks:
    """The callbacks of ``cfg.callbacks`` (:func:`graphbench.build.callbacks.build_callbacks`), and those this task
    reads, found by type: the ``history`` (without it the record's epochs, history, best and tested epoch and train/val
    metrics stay empty), the best-epoch ``checkpoint`` (the first ``ModelCheckpoint`` with a monitor,
    which the history reads too), ``last`` (what a resume continues from), the ``tracker``
    (``time_per_epoch_s``), the test ``predictions``, any NTK alignment (its final values) and the
    ``pruning`` of an Optuna trial (the epoch its pruner stopped it at)."""

    built: list[Callback]
    checkpoint: ModelCheckpoint | None
    history: EpochHistory | None
    last: LastCheckpoint | None
    tracker: ResourceTracker | None
    predictions: TestPredictions | None
    ntk: list[NTKAlignment]
    pruning: OptunaPruning | None = None

    @classmethod
    def of(cls, callbacks: dict[str, Callback]) -> RunCallbacks:
        built = list(callbacks.values())
        history = _only(built, EpochHistory)
        return cls(
            built,
            checkpoint=best_checkpoint(built),
            history=history,
            last=_only(built, LastCheckpoint),
            tracker=_only(built, ResourceTracker),
            predictions=_only(built, TestPredictions),
            ntk=[c for c in built if isinstance(c, NTKAlignment)],
            pruning=_only(built, OptunaPruning),
        )

    def trainer_callbacks(self, record: RunRecord) -> list[Callback]:
        """In config order, then :class:`RecordProgress` when there is a ``history`` (every ending of fit
        records the epochs so far)."""
        if self.history is None:
            return list(self.built)
        return [*self.built, RecordProgress(record, self.history, self.tracker)]

    def trainer_arguments(self, resume_from: Path | None) -> dict[str, Any]:
        """The Trainer's arguments these callbacks decide: no Lightning default checkpoint where the config
        keeps none (graphbench's files are its callbacks'), and no sanity check in a resumed run (it would
        draw from the restored generators before the first epoch does)."""
        arguments: dict[str, Any] = {"enable_checkpointing": any(isinstance(c, Checkpoint) for c in self.built)}
        if resume_from is not None:
            arguments["num_sanity_val_steps"] = 0
        return arguments

    def tested_path(self, at_last: bool) -> str | None:
        """The checkpoint ``Trainer.test`` loads: the best epoch's, or none ``at_last`` (the weights the module holds)."""
        return None if self.checkpoint is None or at_last else self.checkpoint.best_model_path

    def tested_epoch(self, at_last: bool, monitor: str) -> dict[str, float] | None:
        """The history entry of the epoch tested: the best validation epoch, or the last one ``at_last``.
        One :class:`ConfigError` line when validation never produced the monitored metric."""
        history, checkpoint = self.history, self.checkpoint
        if history is None:
            tested = None
        elif at_last:
            tested = history.epochs[-1] if history.epochs else None
        else:
            tested = history.best_record()
        if (history is not None and tested is None) or (
            checkpoint is not None and not at_last and not checkpoint.best_model_path
        ):
            raise ConfigError(
                f"no validation epoch produced {monitor}, so there is no best epoch to test: "
                "validation must run at least once (trainer.check_val_every_n_epoch <= trainer.max_epochs, "
                "trainer.limit_val_batches > 0)"
            )
        return tested


def _only(callbacks: list[Callback], kind: type[CallbackT]) -> CallbackT | None:
    """The callback of type ``kind`` among ``callbacks``, ``None`` when there is none; two are one
    :class:`ConfigError` line (which of them would the record read?)."""
    found = [c for c in callbacks if isinstance(c, kind)]
    if len(found) > 1:
        raise ConfigError(
            f"cfg.callbacks holds {len(found)} callbacks of type {kind.__name__}; the train task reads one: remove the others"
        )
    return found[0] if found else None


def record_results(
    record: RunRecord,
    parts: RunCallbacks,
    tested_epoch: dict[str, float] | None,
    test_metrics: dict[str, Any],
    module: L.LightningModule,
) -> None:
    """The tested epoch's train/val metrics, the test metrics and the final NTK alignments
    (``callbacks=ntk``), the best and tested epochs, time per epoch and peak memory. RecordProgress filled
    the rest when fit ended; without ``callbacks.history`` only the test metrics are known."""
    metrics = epoch_metrics(tested_epoch or {})
    metrics.update({k: float(v) for k, v in test_metrics.items()})
    for ntk in parts.ntk:
        metrics.update(ntk.final_metrics())
    if tested_epoch is not None:
        best = parts.history.best_record() if parts.history is not None else None
        record.best_epoch = int((best or tested_epoch)["epoch"])
        record.tested_epoch = int(tested_epoch["epoch"])
    record.metrics = metrics
    if parts.tracker is not None:
        record.time_per_epoch_s = parts.tracker.time_per_epoch_s
    record.peak_memory_mb = ResourceTracker.peak_memory_mb(module.device)


def resume_point(frame: RunFrame, last: LastCheckpoint | None) -> tuple[Path | None, int | None]:
    """The ``last.ckpt`` that a ``frame.resume`` continues from and the last epoch it holds (0-based), or
    ``(None, None)``. A resume of an earlier run that left no checkpoint says so and keeps its log: the
    ``frame.writer`` moves the CSV rows already written to ``csv/metrics.<n>.csv`` before the run starts
    from epoch 0."""
    output_dir = frame.output_dir
    if not frame.resume:
        return None, None
    if last is not None and last.path.is_file():
        epochs_done = int(torch.load(last.path, map_location="cpu", weights_only=False)["epoch"])
        log.info("resuming from %s (epoch %d done)", last.path, epochs_done - 1)
        return last.path, epochs_done - 1
    earlier = output_dir / "csv" / "metrics.csv"
    if frame.writer and earlier.is_file():
        reason = "callbacks.last_checkpoint is removed" if last is None else f"{last.path} was never written"
        kept = _free_name(earlier)
        earlier.rename(kept)
        log.info("resume=auto starts from epoch 0 (%s); the earlier log is kept as %s", reason, kept)
    return None, None


def _free_name(path: Path) -> Path:
    """``path`` with the first ``.<n>`` before its suffix that names no file: ``metrics.1.csv``, ..."""
    n = 1
    while (candidate := path.with_name(f"{path.stem}.{n}{path.suffix}")).exists():
        n += 1
    return candidate


def raise_if_stopped(trainer: L.Trainer) -> None:
    """Lightning ends ``fit`` quietly after a SIGTERM between batches; make that a preemption."""
    if trainer.received_sigterm:
        raise Preempted("SIGTERM received during training")
    if trainer.interrupted:
        raise KeyboardInterrupt
