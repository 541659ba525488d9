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
from typing import Any

import lightning as L
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from omegaconf import DictConfig, OmegaConf

from graphbench import speedups
from graphbench.build import build_datamodule, build_task_module, open_loggers, show_progress_bar, sized_network
from graphbench.callbacks.divergence import DivergenceGuard
from graphbench.callbacks.history import EpochHistory
from graphbench.callbacks.last_checkpoint import LastCheckpoint
from graphbench.callbacks.ntk import NTKAlignment
from graphbench.callbacks.parameter_budget import ParameterBudget
from graphbench.callbacks.predictions import TestPredictions
from graphbench.callbacks.record_progress import RecordProgress
from graphbench.callbacks.resources import ResourceTracker, reset_peak_memory
from graphbench.callbacks.rng_state import RNGState
from graphbench.config.checks import check_config
from graphbench.config.instantiate import build
from graphbench.run.checkpoints import CHECKPOINTS, check_checkpoint_file, load_network_weights, read_checkpoint
from graphbench.run.distributed import cluster_plugins, launch_context, processes_per_node
from graphbench.run.errors import ConfigError
from graphbench.run.frame import RunFrame, record_raw_files, recorded_run, status_of
from graphbench.run.loggers import ResumableCSVLogger
from graphbench.run.record import (
    COMPLETED,
    RUNNING,
    RunRecord,
    exit_code,
    failed,
)
from graphbench.run.signals import Preempted, SignalState, run_signals

log = logging.getLogger(__name__)

#: the full training state at the end of the last completed epoch, under <run dir>/checkpoints/
LAST_CHECKPOINT: str = "last.ckpt"


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
    process) logs and writes ``predictions.npz``."""
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
    max_params = cfg.budget.get("max_params")
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

    checkpoint_dir = output_dir / "checkpoints"
    checkpoint = ModelCheckpoint(
        dirpath=checkpoint_dir,
        filename="best",
        monitor=info.monitor,
        mode="max" if info.higher_is_better else "min",
        save_top_k=1,
        save_weights_only=True,
        enable_version_counter=False,
    )
    # the full state at epoch ends: what a resumed (requeued, preempted) run continues from
    last = LastCheckpoint(checkpoint_dir, LAST_CHECKPOINT[: -len(".ckpt")], every_s=float(cfg.checkpoint_every_s))
    progress_bar = show_progress_bar(trainer_cfg.get("enable_progress_bar", "auto"))
    trainer_cfg["enable_progress_bar"] = progress_bar
    # the DataModules shard the data over DDP ranks themselves, without Lightning's padding repeats
    # in evaluation (graphbench.data.store.sharding)
    trainer_cfg["use_distributed_sampler"] = False
    # a profiler chosen in the config (++trainer.profiler=simple) is kept; without one, the quiet default
    quiet_profiler = None if trainer_cfg.get("profiler") else speedups.profiler(cfg.speedups.enabled)
    default_profiler = {} if quiet_profiler is None else {"profiler": quiet_profiler}
    history = EpochHistory(checkpoint, info.monitor, echo=not progress_bar)
    tracker = ResourceTracker()
    predictions = TestPredictions()
    extra_callbacks = [build(c, f"callbacks.{k}") for k, c in (cfg.get("callbacks") or {}).items() if c]
    if writer:
        open_loggers(cfg, record, loggers)
    resume_from = checkpoint_dir / LAST_CHECKPOINT if resume and (checkpoint_dir / LAST_CHECKPOINT).is_file() else None
    if resume_from is not None:
        resumed_epoch = int(torch.load(resume_from, map_location="cpu", weights_only=False)["epoch"])
        log.info("resuming from %s (epoch %d done)", resume_from, resumed_epoch)
        for lg in loggers:
            if isinstance(lg, ResumableCSVLogger):
                lg.resume_after(resumed_epoch)
    # speedups=auto: self.log without Lightning's per-call walk over each logged result, for this run
    with (
        launch_context(cfg, local_processes, output_dir, resume=resume_from is not None),
        speedups.run_scope(cfg.speedups.enabled),
    ):
        trainer: L.Trainer = build(
            OmegaConf.create(trainer_cfg),
            "trainer",
            # order matters among the Checkpoint callbacks: best, then the history that reads it, then last
            callbacks=[
                checkpoint,
                history,
                RecordProgress(record, history, tracker),  # every ending records the epochs so far
                last,
                RNGState(),
                tracker,
                predictions,
                ParameterBudget(max_params),
                DivergenceGuard(),
                *extra_callbacks,
            ],
            logger=loggers or False,
            default_root_dir=str(output_dir),
            plugins=cluster_plugins(),
            **default_profiler,
        )

        with signals.lightning_loop():
            trainer.fit(module, datamodule=datamodule, ckpt_path=str(resume_from) if resume_from else None)
        _raise_if_stopped(trainer)
        smoke_test = bool(trainer_cfg.get("fast_dev_run"))
        # Lightning's fast_dev_run saves no checkpoint: the one epoch it runs is tested with its weights;
        # task.checkpoint=last tests the last epoch's weights, those the module holds after fit
        at_last = smoke_test or tested == "last"
        best = history.best_record()
        tested_epoch = (history.epochs[-1] if history.epochs else None) if at_last else best
        if tested_epoch is None:
            raise ConfigError(
                f"no validation epoch produced {info.monitor}, so there is no best epoch to test: "
                "validation must run at least once (trainer.check_val_every_n_epoch <= trainer.max_epochs, "
                "trainer.limit_val_batches > 0)"
            )
        with signals.lightning_loop():
            test_metrics = trainer.test(
                module, datamodule=datamodule, ckpt_path=None if at_last else checkpoint.best_model_path, verbose=False
            )[0]
        _raise_if_stopped(trainer)
    # RecordProgress filled the rest after every epoch; fast_dev_run's best is its one (uncheckpointed) epoch
    metrics = {k: v for k, v in tested_epoch.items() if k.startswith(("train/", "val/")) and not k.endswith("_best")}
    metrics.update({k: float(v) for k, v in test_metrics.items()})
    for callback in extra_callbacks:  # callbacks=ntk: the last measured NTK alignments (ntk/*_final)
        if isinstance(callback, NTKAlignment):
            metrics.update(callback.final_metrics())
    record.best_epoch = int((best or tested_epoch)["epoch"])
    record.tested_epoch = int(tested_epoch["epoch"])
    record.metrics = metrics
    record.peak_memory_mb = ResourceTracker.peak_memory_mb(module.device)
    if writer:
        predictions.save(output_dir / "predictions.npz")


def _raise_if_stopped(trainer: L.Trainer) -> None:
    """Lightning ends ``fit`` quietly after a SIGTERM between batches; make that a preemption."""
    if trainer.received_sigterm:
        raise Preempted("SIGTERM received during training")
    if trainer.interrupted:
        raise KeyboardInterrupt
