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
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import lightning as L
import torch
from lightning.pytorch.callbacks import Callback, Checkpoint, ModelCheckpoint
from omegaconf import DictConfig, OmegaConf

from graphbench import speedups
from graphbench.build import (
    build_callbacks,
    build_datamodule,
    build_trainer,
    open_loggers,
    prepared_model,
)
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
from graphbench.run.errors import ConfigError, Pruned
from graphbench.run.frame import RunFrame, record_raw_files, recorded_run, status_of
from graphbench.run.record import (
    COMPLETED,
    RUNNING,
    RunRecord,
    exit_code,
    failed,
)
from graphbench.run.signals import Preempted, SignalState, run_signals
from graphbench.run.threads import threads_setting

log = logging.getLogger(__name__)

CallbackT = TypeVar("CallbackT", bound=Callback)


def train(cfg: DictConfig, overrides: Sequence[str] = (), checkpoint: str = "best") -> RunRecord:
    """Run one experiment; returns its record, which is also in ``<paths.output_dir>/results.json``.
    A DDP rank started by a scheduler (SLURM, torchrun) that is not rank 0 runs :func:`train_worker`.
    ``overrides``: Hydra's task overrides, recorded in the run's provenance. ``checkpoint``
    (``task.checkpoint``): test the weights of the ``best`` validation epoch or of the ``last`` epoch."""
    if checkpoint not in CHECKPOINTS:
        raise ConfigError(f"task.checkpoint={checkpoint!r} is not valid; valid: {list(CHECKPOINTS)}")

    def body(cfg: DictConfig, record: RunRecord, frame: RunFrame) -> None:
        _fit_and_test(
            cfg, record, frame.output_dir, frame.signals, frame.loggers, resume=frame.resume, writer=True, tested=checkpoint
        )

    def other_rank(cfg: DictConfig, resume: bool) -> RunRecord:
        code = train_worker(cfg, resume=resume)
        return RunRecord(
            status=COMPLETED if code == 0 else failed(f"exit code {code}"), config={}, run_dir=str(cfg.paths.output_dir)
        )

    if cfg.get("ckpt_path"):  # before the run claims its directory: a wrong path writes nothing
        check_checkpoint_file(cfg.ckpt_path)
    return recorded_run(cfg, body, other_rank, overrides=overrides)


def train_worker(cfg: DictConfig, resume: bool) -> int:
    """A DDP rank other than 0: the same fit and test as rank 0 (which writes every file of the run);
    returns the exit code of its status. Errors go to stderr, where its launcher collects them."""
    output_dir = Path(cfg.paths.output_dir)
    record = RunRecord(status=RUNNING, config={}, run_dir=str(output_dir))
    with run_signals() as signals:
        try:
            tested = str(cfg.task.get("checkpoint", "best"))
            _fit_and_test(cfg, record, output_dir, signals, [], resume=resume, writer=False, tested=tested)
        except BaseException as exc:
            traceback.print_exception(exc)
            return exit_code(status_of(exc, signals, None))
    return 0


def _fit_and_test(
    cfg: DictConfig,
    record: RunRecord,
    output_dir: Path,
    signals: SignalState,
    loggers: list[Any],
    resume: bool,
    writer: bool,
    tested: str = "best",
) -> None:
    """Fit, then test at the best validation epoch (``tested="last"``: at the last epoch), filling
    ``record``: when fit ends, however it ends, the epochs trained, the best epoch so far, its train/val
    metrics and the history (``RecordProgress``, so a run that ends early records them), then the tested epoch's
    train/val metrics and the test metrics. Only the ``writer`` (rank 0 of a DDP run, or the only
    process) logs and writes ``predictions.npz``."""
    check_config(cfg)
    reset_peak_memory()  # the peak of this run, not of an earlier one in this process (an in-process multirun)
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    datamodule = _prepared_data(cfg, record)
    module = prepared_model(cfg, datamodule.info, record)
    fast_dev_run = bool(cfg.trainer.get("fast_dev_run"))
    parts = RunCallbacks.of(build_callbacks(cfg))
    # Lightning's fast_dev_run saves no checkpoint: the one epoch it runs is tested with its weights;
    # task.checkpoint=last tests the last epoch's weights, those the module holds after fit
    at_last = fast_dev_run or tested == "last"
    if parts.checkpoint is None and not at_last:
        raise ConfigError(
            "task.checkpoint=best tests the weights that callbacks.checkpoint keeps: keep callbacks.checkpoint, "
            "or set task.checkpoint=last"
        )
    resume_from, resumed_epoch = _resume_point(resume, parts.last, output_dir, writer)
    if writer:
        open_loggers(cfg, record, loggers, resumed_epoch)
    # a resumed run skips the sanity check, which would draw from the restored generators before the first epoch does
    sanity = {"num_sanity_val_steps": 0} if resume_from is not None else {}
    threads = TrainingThreads(threads_setting(cfg.get("threads")), record.hidden_dim or 1, _local_processes(cfg), record)
    with (
        launch_context(cfg, _local_processes(cfg), output_dir, resume=resume_from is not None),
        speedups.run_scope(cfg.speedups.enabled),
    ):
        # no Lightning default checkpoint where the config keeps none: graphbench's files are its callbacks'
        checkpointing = {"enable_checkpointing": any(isinstance(c, Checkpoint) for c in parts.built)}
        callbacks = [*parts.trainer_callbacks(record), threads]
        trainer = build_trainer(cfg, callbacks, loggers, str(output_dir), plugins=cluster_plugins(), **sanity, **checkpointing)
        with signals.lightning_loop():
            trainer.fit(module, datamodule=datamodule, ckpt_path=str(resume_from) if resume_from else None)
        _raise_if_stopped(trainer)
        if parts.history is not None:  # also when the resumed checkpoint held every epoch and fit ran no hook
            fill_from_history(record, parts.history, parts.tracker)
        tested_epoch = _tested_epoch(parts, at_last, datamodule.info.monitor)
        with signals.lightning_loop():
            best_path = None if parts.checkpoint is None or at_last else parts.checkpoint.best_model_path
            test_metrics = trainer.test(module, datamodule=datamodule, ckpt_path=best_path, verbose=False)[0]
        _raise_if_stopped(trainer)
    _record_results(record, parts, tested_epoch, test_metrics, module)
    if writer and parts.predictions is not None:
        parts.predictions.save(output_dir / "predictions.npz")
    if parts.pruning is not None and parts.pruning.pruned_epoch is not None:  # tested and recorded as any run
        raise Pruned(parts.pruning.pruned_epoch)


def _local_processes(cfg: DictConfig) -> int:
    trainer_cfg = OmegaConf.to_container(cfg.trainer, resolve=True)
    assert isinstance(trainer_cfg, dict)
    return processes_per_node(trainer_cfg)


def _prepared_data(cfg: DictConfig, record: RunRecord) -> DataModule:
    """The DataModule of ``cfg``, checked against the run's processes, prepared and set up for fitting;
    ``record`` gets the MD5s of the raw files it read."""
    datamodule = build_datamodule(cfg)
    datamodule.check_devices(_local_processes(cfg) * int(cfg.trainer.get("num_nodes") or 1))
    datamodule.prepare_data()
    datamodule.setup("fit")
    record_raw_files(record, datamodule)
    return datamodule


@dataclass
class RunCallbacks:
    """The callbacks of ``cfg.callbacks`` (:func:`graphbench.build.build_callbacks`), and those this task
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


def _only(callbacks: list[Callback], kind: type[CallbackT]) -> CallbackT | None:
    """The callback of type ``kind`` among ``callbacks``, ``None`` when there is none; two are one
    :class:`ConfigError` line (which of them would the record read?)."""
    found = [c for c in callbacks if isinstance(c, kind)]
    if len(found) > 1:
        raise ConfigError(
            f"cfg.callbacks holds {len(found)} callbacks of type {kind.__name__}; the train task reads one: remove the others"
        )
    return found[0] if found else None


def _tested_epoch(parts: RunCallbacks, at_last: bool, monitor: str) -> dict[str, float] | None:
    """The history entry of the epoch tested: the best validation epoch, or the last one ``at_last``.
    One :class:`ConfigError` line when validation never produced the monitored metric."""
    history, checkpoint = parts.history, parts.checkpoint
    if history is None:
        tested = None
    elif at_last:
        tested = history.epochs[-1] if history.epochs else None
    else:
        tested = history.best_record()
    if (history is not None and tested is None) or (checkpoint is not None and not at_last and not checkpoint.best_model_path):
        raise ConfigError(
            f"no validation epoch produced {monitor}, so there is no best epoch to test: "
            "validation must run at least once (trainer.check_val_every_n_epoch <= trainer.max_epochs, "
            "trainer.limit_val_batches > 0)"
        )
    return tested


def _record_results(
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


def _resume_point(resume: bool, last: LastCheckpoint | None, output_dir: Path, writer: bool) -> tuple[Path | None, int | None]:
    """The ``last.ckpt`` a ``resume`` continues from and the last epoch it holds (0-based), or
    ``(None, None)``. A resume of an earlier run that left no checkpoint says so and keeps its log: the
    ``writer`` moves the CSV rows already written to ``csv/metrics.<n>.csv`` before the run starts from
    epoch 0."""
    if not resume:
        return None, None
    if last is not None and last.path.is_file():
        epochs_done = int(torch.load(last.path, map_location="cpu", weights_only=False)["epoch"])
        log.info("resuming from %s (epoch %d done)", last.path, epochs_done - 1)
        return last.path, epochs_done - 1
    earlier = output_dir / "csv" / "metrics.csv"
    if writer and earlier.is_file():
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


def _raise_if_stopped(trainer: L.Trainer) -> None:
    """Lightning ends ``fit`` quietly after a SIGTERM between batches; make that a preemption."""
    if trainer.received_sigterm:
        raise Preempted("SIGTERM received during training")
    if trainer.interrupted:
        raise KeyboardInterrupt
