"""The ``train`` task: build data and model from the config, fit, test at the best validation epoch,
and write ``results.json`` and ``predictions.npz`` into the run directory.

Whatever happens, the run ends with a truthful ``status`` in ``results.json`` (see
:mod:`graphbench.record`): ``completed``, ``failed: <one line>``, ``diverged at epoch N``,
``interrupted`` (Ctrl-C) or ``preempted`` (SIGTERM). :func:`train` never raises for a run that went
wrong; the caller maps the status to an exit code with :func:`graphbench.record.exit_code`.
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import lightning as L
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from omegaconf import DictConfig, OmegaConf
from torch import nn

from graphbench import speedups
from graphbench.budget import solve_width
from graphbench.callbacks.divergence import DivergenceGuard
from graphbench.callbacks.history import EpochHistory
from graphbench.callbacks.last_checkpoint import LastCheckpoint
from graphbench.callbacks.ntk import NTKAlignment
from graphbench.callbacks.parameter_budget import ParameterBudget
from graphbench.callbacks.predictions import TestPredictions
from graphbench.callbacks.record_progress import RecordProgress
from graphbench.callbacks.resources import ResourceTracker, reset_peak_memory
from graphbench.callbacks.rng_state import RNGState
from graphbench.checkpoints import check_checkpoint_file, load_network_weights, read_checkpoint
from graphbench.config_checks import check_config
from graphbench.data.datamodules import GraphLevelDataModule
from graphbench.data.datamodules.config import datamodule_arguments
from graphbench.data.samplers.config import sampler_argument
from graphbench.distributed import cluster_plugins, launch_context, processes_per_node
from graphbench.errors import ConfigError
from graphbench.info import DatasetInfo
from graphbench.instantiate import METADATA_KEYS, build
from graphbench.loggers import ResumableCSVLogger, build_loggers
from graphbench.modules.network import count_parameters
from graphbench.modules.task_module import GraphTaskModule
from graphbench.record import (
    COMPLETED,
    RUNNING,
    RunRecord,
    exit_code,
    failed,
    flat_config,
)
from graphbench.run_frame import RunFrame, record_raw_files, recorded_run, status_of
from graphbench.signals import Preempted, SignalState, run_signals
from graphbench.transforms.dataset_transform import dataset_transform

log = logging.getLogger(__name__)

#: the full training state at the end of the last completed epoch, under <run dir>/checkpoints/
LAST_CHECKPOINT: str = "last.ckpt"
#: ``task.checkpoint``: the weights a run is tested with, the best validation epoch's or the last epoch's
CHECKPOINTS: tuple[str, ...] = ("best", "last")


def build_datamodule(cfg: DictConfig) -> GraphLevelDataModule:
    """The DataModule of ``cfg.dataset`` (its level's DataModule with its ``source`` built first; the
    flat knobs that only the source reads are not passed on: :mod:`graphbench.data.datamodules.config`)."""
    pe_transform = dataset_transform(cfg)  # the graph transform (+transform=...), then the PE
    return build(
        datamodule_arguments(cfg.dataset), f"dataset '{cfg.dataset.name}'", pe_transform=pe_transform, **sampler_argument(cfg)
    )


def network_builder(cfg: DictConfig, info: DatasetInfo) -> Callable[[int], nn.Module]:
    """``hidden_dim -> network``: everything but the width comes from the config, with the speed-up
    kernels swapped in under ``speedups=auto`` (:func:`graphbench.speedups.apply`: same parameters,
    same losses)."""
    partial = build(
        cfg.model,
        f"model '{cfg.model.name}'",
        (*METADATA_KEYS, "consistency"),  # the training objective's part (build_task_module), not the network's
        _partial_=True,
        info=info,
        head=build(cfg.head, "head", METADATA_KEYS),
        norm=build(cfg.normalization, "normalization", METADATA_KEYS),
        pe_encoder=build(cfg.pe.encoder, "pe.encoder", METADATA_KEYS) if cfg.pe.get("encoder") else None,
    )
    if not cfg.speedups.enabled:
        return lambda hidden_dim: partial(hidden_dim=hidden_dim)
    return lambda hidden_dim: speedups.apply(partial(hidden_dim=hidden_dim))


def network_width(cfg: DictConfig, make_network: Callable[[int], nn.Module]) -> int:
    """``model.hidden_dim``, or the width solved under ``budget.max_params`` when a budget is set."""
    max_params = cfg.budget.get("max_params")
    if max_params is not None and cfg.budget.get("solve_width", True):
        return solve_width(make_network, int(max_params), int(cfg.model.get("width_multiple", 1))).hidden_dim
    return int(cfg.model.hidden_dim)


def build_task_module(cfg: DictConfig, network: nn.Module, info: DatasetInfo) -> GraphTaskModule:
    """The LightningModule from the dataset's ``module`` node (its ``_target_``, loss and protocol
    arguments), given the network, the dataset's facts, the optimizer and the scheduler, and the model's
    consistency regularization (``model.consistency``, GRAND's) where the model config has one."""
    module_cfg = cfg.dataset.get("module")
    if module_cfg is None:
        raise ConfigError(
            f"dataset '{cfg.dataset.name}' names no task module: its YAML needs a `module:` node (see conf/dataset/cycles.yaml)"
        )
    make_module = build(module_cfg, "dataset.module", _partial_=True)
    consistency_cfg = cfg.model.get("consistency")
    objective: dict[str, Any] = {}
    if consistency_cfg is not None:
        if info.level == "link":
            raise ConfigError(
                f"model.consistency (model '{cfg.model.name}') trains node- and graph-level tasks; dataset "
                f"'{cfg.dataset.name}' is link-level: set model.consistency=null"
            )
        objective["consistency"] = build(consistency_cfg, "model.consistency")
    return make_module(
        network,
        info,
        optimizer=build(cfg.optimizer, "optimizer", METADATA_KEYS),
        scheduler=build(cfg.scheduler, "scheduler", METADATA_KEYS) if cfg.scheduler.get("_target_") else None,
        config=OmegaConf.to_container(cfg, resolve=True),  # saved in its checkpoints (graphbench.checkpoints)
        **objective,
    )


def show_progress_bar(setting: Any) -> bool:
    """``trainer.enable_progress_bar``: ``auto`` shows Lightning's bar on a terminal only; elsewhere
    (a log file, a cluster job) each epoch is one line instead of a pile of bar refreshes."""
    if setting == "auto":
        return sys.stdout.isatty()
    return bool(setting)


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
    make_network = network_builder(cfg, info)
    max_params = cfg.budget.get("max_params")
    hidden_dim = network_width(cfg, make_network)
    L.seed_everything(cfg.seed, workers=True, verbose=False)  # same initial weights whatever the search built
    network = make_network(hidden_dim)
    if cfg.get("ckpt_path"):  # start from these weights, with a fresh optimizer (resume=auto restores a whole state)
        load_network_weights(network, read_checkpoint(cfg.ckpt_path), cfg.ckpt_path)
        log.info("initial weights from %s", cfg.ckpt_path)
    num_params = count_parameters(network)
    log.info("model %s: hidden_dim=%d, %s parameters", cfg.model.name, hidden_dim, f"{num_params:,}")
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
        loggers.extend(build_loggers(cfg))
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
        for lg in loggers:
            lg.log_hyperparams(flat_config(record.config or {}))

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
