"""The ``train`` task: build data and model from the config, fit, test at the best validation epoch,
and write ``results.json`` and ``predictions.npz`` into the run directory.

Whatever happens, the run ends with a truthful ``status`` in ``results.json`` (see
:mod:`graphbench.run.record`): ``completed``, ``failed: <one line>``, ``diverged at epoch N``,
``interrupted`` (Ctrl-C) or ``preempted`` (SIGTERM). :func:`train` never raises for a run that went
wrong; the caller maps the status to an exit code with :func:`graphbench.run.record.exit_code`.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import lightning as L
import torch
from lightning.pytorch.callbacks import Callback, ModelCheckpoint
from omegaconf import DictConfig, OmegaConf

from graphbench import speedups
from graphbench.build import (
    build_callbacks,
    build_datamodule,
    build_task_module,
    open_loggers,
    show_progress_bar,
    sized_network,
)
from graphbench.callbacks.history import EpochHistory
from graphbench.callbacks.last_checkpoint import LastCheckpoint
from graphbench.callbacks.ntk import NTKAlignment
from graphbench.callbacks.predictions import TestPredictions
from graphbench.callbacks.record_progress import RecordProgress
from graphbench.callbacks.resources import ResourceTracker, reset_peak_memory
from graphbench.config.checks import check_config
from graphbench.config.instantiate import build
from graphbench.run.checkpoints import CHECKPOINTS, check_checkpoint_file, load_network_weights, read_checkpoint
from graphbench.run.distributed import cluster_plugins, launch_context, processes_per_node
from graphbench.run.errors import ConfigError
from graphbench.run.frame import RunFrame, record_raw_files, recorded_run, status_of
from graphbench.run.record import (
    COMPLETED,
    RUNNING,
    RunRecord,
    exit_code,
    failed,
)
from graphbench.run.signals import Preempted, SignalState, run_signals

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
    ``record``: after every epoch the epochs trained, the best epoch so far, its train/val metrics and
    the history (``RecordProgress``, so a run that ends early records them), then the tested epoch's
    train/val metrics and the test metrics. Only the ``writer`` (rank 0 of a DDP run, or the only
    process) logs and writes ``predictions.npz``.

    The callbacks are ``cfg.callbacks`` (:func:`graphbench.build.build_callbacks`); this task reads
    those named ``checkpoint`` (the weights tested at the best epoch: required unless the last epoch
    is tested), ``history`` (without it the record's epochs, history, best and tested epoch and
    train/val metrics stay empty), ``last_checkpoint`` (what ``resume`` continues from),
    ``resources`` (``time_per_epoch_s``) and ``predictions`` (``predictions.npz``), and any
    :class:`NTKAlignment` (its final alignments); it attaches :class:`RecordProgress` after ``history``."""
    check_config(cfg)
    reset_peak_memory()  # the peak of this run, not of an earlier one in this process (an in-process multirun)
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    datamodule = build_datamodule(cfg)
    trainer_cfg = OmegaConf.to_container(cfg.trainer, resolve=True)
    assert isinstance(trainer_cfg, dict)
    local_processes = processes_per_node(trainer_cfg)
    datamodule.check_devices(local_processes * int(trainer_cfg.get("num_nodes") or 1))
    datamodule.prepare_data()
    datamodule.setup("fit")
    record_raw_files(record, datamodule)
    info = datamodule.info
    sized = sized_network(cfg, info)
    hidden_dim, num_params = sized.hidden_dim, sized.num_params
    L.seed_everything(cfg.seed, workers=True, verbose=False)  # same initial weights whatever the search built
    network = sized.make(hidden_dim)
    if cfg.get("ckpt_path"):  # start from these weights, with a fresh optimizer (resume=auto restores a whole state)
        load_network_weights(network, read_checkpoint(cfg.ckpt_path), cfg.ckpt_path)
        log.info("initial weights from %s", cfg.ckpt_path)
    if cfg.model.compile:  # the forward, in place: state_dict keys (checkpoints) stay those of eager runs
        network = speedups.compile_network(network)
    module = build_task_module(cfg, network, info)
    record.num_params, record.hidden_dim = num_params, hidden_dim
    record.monitor, record.metric, record.higher_is_better = info.monitor, info.metric, info.higher_is_better

    progress_bar = show_progress_bar(trainer_cfg.get("enable_progress_bar", "auto"))
    trainer_cfg["enable_progress_bar"] = progress_bar
    # the DataModules shard the data over DDP ranks themselves, without Lightning's padding repeats
    # in evaluation (graphbench.data.store.sharding)
    trainer_cfg["use_distributed_sampler"] = False
    # a profiler chosen in the config (++trainer.profiler=simple) is kept; without one, the quiet default
    quiet_profiler = None if trainer_cfg.get("profiler") else speedups.profiler(cfg.speedups.enabled)
    default_profiler = {} if quiet_profiler is None else {"profiler": quiet_profiler}
    callbacks = build_callbacks(cfg, info, echo=not progress_bar)
    checkpoint = _named(callbacks, "checkpoint", ModelCheckpoint)
    history = _named(callbacks, "history", EpochHistory)
    tracker = _named(callbacks, "resources", ResourceTracker)
    predictions = _named(callbacks, "predictions", TestPredictions)
    last = _named(callbacks, "last_checkpoint", LastCheckpoint)  # the full state a resumed run continues from
    # Lightning's fast_dev_run saves no checkpoint: the one epoch it runs is tested with its weights;
    # task.checkpoint=last tests the last epoch's weights, those the module holds after fit
    at_last = bool(trainer_cfg.get("fast_dev_run")) or tested == "last"
    if checkpoint is None and not at_last:
        raise ConfigError(
            "task.checkpoint=best tests the weights that callbacks.checkpoint keeps: keep callbacks.checkpoint, "
            "or set task.checkpoint=last"
        )
    trainer_callbacks: list[Callback] = []
    for callback in callbacks.values():  # in config order: the best checkpoint, then history, then last
        trainer_callbacks.append(callback)
        if callback is history:  # every ending records the epochs so far
            trainer_callbacks.append(RecordProgress(record, history, tracker))
    resume_from, resumed_epoch = _resume_point(resume, last, output_dir, writer)
    if writer:
        open_loggers(cfg, record, loggers, resumed_epoch)
    if resume_from is not None:  # the sanity check would draw from the restored generators before epoch 1 does
        trainer_cfg["num_sanity_val_steps"] = 0
    # speedups=auto: self.log without Lightning's per-call walk over each logged result, for this run
    with (
        launch_context(cfg, local_processes, output_dir, resume=resume_from is not None),
        speedups.run_scope(cfg.speedups.enabled),
    ):
        trainer: L.Trainer = build(
            OmegaConf.create(trainer_cfg),
            "trainer",
            # order matters among the Checkpoint callbacks: best, then the history that reads it, then last
            callbacks=trainer_callbacks,
            logger=loggers or False,
            default_root_dir=str(output_dir),
            plugins=cluster_plugins(),
            **default_profiler,
        )

        with signals.lightning_loop():
            trainer.fit(module, datamodule=datamodule, ckpt_path=str(resume_from) if resume_from else None)
        _raise_if_stopped(trainer)
        best = history.best_record() if history is not None else None
        last_epoch = history.epochs[-1] if history is not None and history.epochs else None
        tested_epoch = last_epoch if at_last else best
        if (history is not None and tested_epoch is None) or (
            checkpoint is not None and not at_last and not checkpoint.best_model_path
        ):
            raise ConfigError(
                f"no validation epoch produced {info.monitor}, so there is no best epoch to test: "
                "validation must run at least once (trainer.check_val_every_n_epoch <= trainer.max_epochs, "
                "trainer.limit_val_batches > 0)"
            )
        with signals.lightning_loop():
            test_metrics = trainer.test(
                module,
                datamodule=datamodule,
                ckpt_path=None if checkpoint is None or at_last else checkpoint.best_model_path,
                verbose=False,
            )[0]
        _raise_if_stopped(trainer)
    # RecordProgress filled the rest after every epoch; fast_dev_run's best is its one (uncheckpointed) epoch;
    # without callbacks.history the epochs stay empty and only the test metrics are known
    metrics = {k: v for k, v in (tested_epoch or {}).items() if k.startswith(("train/", "val/")) and not k.endswith("_best")}
    metrics.update({k: float(v) for k, v in test_metrics.items()})
    for callback in callbacks.values():  # callbacks=ntk: the last measured NTK alignments (ntk/*_final)
        if isinstance(callback, NTKAlignment):
            metrics.update(callback.final_metrics())
    if tested_epoch is not None:
        record.best_epoch = int((best or tested_epoch)["epoch"])
        record.tested_epoch = int(tested_epoch["epoch"])
    record.metrics = metrics
    if tracker is not None:
        record.time_per_epoch_s = tracker.time_per_epoch_s
    record.peak_memory_mb = ResourceTracker.peak_memory_mb(module.device)
    if writer and predictions is not None:
        predictions.save(output_dir / "predictions.npz")


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


def _named(callbacks: dict[str, Callback], name: str, kind: type[CallbackT]) -> CallbackT | None:
    """The callback ``callbacks.<name>``, or ``None`` when the config removed it; one of another type
    than the ``kind`` this task reads raises :class:`ConfigError`."""
    callback = callbacks.get(name)
    if callback is None:
        return None
    if not isinstance(callback, kind):
        raise ConfigError(
            f"callbacks.{name} is a {type(callback).__name__}; the train task reads it as a {kind.__name__}: "
            f"give it a _target_ of that type, or remove it (~callbacks.{name})"
        )
    return callback


def _raise_if_stopped(trainer: L.Trainer) -> None:
    """Lightning ends ``fit`` quietly after a SIGTERM between batches; make that a preemption."""
    if trainer.received_sigterm:
        raise Preempted("SIGTERM received during training")
    if trainer.interrupted:
        raise KeyboardInterrupt
