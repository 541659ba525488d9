"""The builders every task, analysis and benchmark uses: from a composed config to the DataModule, the
network (its width solved under the parameter budget), the task module, the callbacks and the loggers.

Each takes the config from its caller, never from a global, and builds through
:func:`graphbench.config.instantiate.build`, which names the config node in every error."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import lightning as L
import torch
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.loggers.logger import Logger
from omegaconf import DictConfig, OmegaConf
from torch import nn
from torch_geometric.transforms import BaseTransform

from graphbench import speedups
from graphbench.config.instantiate import METADATA_KEYS, build
from graphbench.data.datamodules import DataModule
from graphbench.data.datamodules.config import datamodule_from_config
from graphbench.data.info import DatasetInfo
from graphbench.data.samplers.config import build_sampler
from graphbench.modules.budget import solve_width
from graphbench.modules.layers.grand import INITIALIZATIONS, initialize
from graphbench.modules.network import count_parameters
from graphbench.modules.task_module import GraphTaskModule
from graphbench.run.checkpoints import load_network_weights, read_checkpoint
from graphbench.run.errors import ConfigError
from graphbench.run.loggers import ResumableCSVLogger
from graphbench.run.record import RunRecord, flat_config
from graphbench.transforms.dataset_transform import dataset_transform

log = logging.getLogger(__name__)


def build_datamodule(cfg: DictConfig, first: BaseTransform | None = None) -> DataModule:
    """The DataModule of ``cfg.dataset``: its level's DataModule with the keys of its schema, its
    ``source`` node built as it is (:mod:`graphbench.data.datamodules.config`), the ``sampler`` group
    (one-graph mini-batch sizes), and the graph transform and PE, after ``first`` where a task gives
    one (the memorization task's largest connected component)."""
    pe_transform = dataset_transform(cfg, first)  # first, the graph transform (+transform=...), then the PE
    return datamodule_from_config(cfg.dataset, sampler=build_sampler(cfg.get("sampler")), pe_transform=pe_transform)


def network_builder(cfg: DictConfig, info: DatasetInfo) -> Callable[[int], nn.Module]:
    """``hidden_dim -> network``: everything but the width comes from the config, its parameters
    initialized as ``model.init`` says (:func:`graphbench.modules.layers.grand.initialize`; ``default``
    when the model has no such key), with the speed-up kernels swapped in under ``speedups=auto``
    (:func:`graphbench.speedups.apply`: same parameters, same losses)."""
    init = str(cfg.model.get("init", "default"))
    if init not in INITIALIZATIONS:
        raise ConfigError(f"model.init={init} is not an initialization; valid: {', '.join(INITIALIZATIONS)}")
    partial = build(
        cfg.model,
        f"model '{cfg.model.name}'",
        # the objective's part (build_task_module), the initialization, the compilation's mode (prepared_model)
        (*METADATA_KEYS, "consistency", "init", "compile_mode"),
        _partial_=True,
        info=info,
        head=build(cfg.head, "head", METADATA_KEYS),
        norm=build(cfg.normalization, "normalization", METADATA_KEYS),
        pe_encoder=build(cfg.pe.encoder, "pe.encoder", METADATA_KEYS) if cfg.pe.get("encoder") else None,
    )
    if not cfg.speedups.enabled:
        return lambda hidden_dim: initialize(partial(hidden_dim=hidden_dim), init)
    return lambda hidden_dim: speedups.apply(initialize(partial(hidden_dim=hidden_dim), init))


def network_width(cfg: DictConfig, make_network: Callable[[int], nn.Module]) -> int:
    """``model.hidden_dim``, or the width solved under ``budget.max_params`` when a budget is set."""
    max_params = cfg.budget.get("max_params")
    if max_params is not None and cfg.budget.get("solve_width", True):
        # a PE concatenated to the node embedding (pe.concat_dim) needs at least one channel beside it
        min_width = int(cfg.pe.get("concat_dim") or 0) + 1
        return solve_width(make_network, int(max_params), int(cfg.model.get("width_multiple", 1)), min_width=min_width).hidden_dim
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
        config=OmegaConf.to_container(cfg, resolve=True),  # saved in its checkpoints (graphbench.run.checkpoints)
        **objective,
    )


def show_progress_bar(setting: Any) -> bool:
    """``trainer.enable_progress_bar``: ``auto`` shows Lightning's bar on a terminal only; elsewhere
    (a log file, a cluster job) each epoch is one line instead of a pile of bar refreshes."""
    if setting == "auto":
        return sys.stdout.isatty()
    return bool(setting)


def build_callbacks(cfg: DictConfig) -> dict[str, Callback]:
    """The Lightning callbacks of ``cfg.callbacks`` (``conf/callbacks/default.yaml``), by name and in
    config order, each built from its node as it stands (its ``monitor`` and ``mode`` interpolate the
    dataset's metric and direction); an entry removed (``~callbacks.history``) or set to null is not built.
    A trial of an Optuna search with a pruner (``optuna_trial``, set by the search) adds ``optuna_pruning``,
    which reports the dataset's validation metric to the trial (:func:`build_optuna_pruning`)."""
    callbacks = {str(name): build(node, f"callbacks.{name}") for name, node in (cfg.get("callbacks") or {}).items() if node}
    trial = cfg.get("optuna_trial")
    if trial is not None and trial.get("pruner") is not None:
        callbacks["optuna_pruning"] = build_optuna_pruning(trial, cfg.dataset)
    return callbacks


def build_optuna_pruning(trial: DictConfig, dataset: DictConfig) -> Callback:
    """The pruning callback of the trial ``trial`` (``{storage, study_name, number, pruner}``, the node the
    search passes each job as ``+optuna_trial=...``), judging ``val/<dataset.metric>`` in the dataset's direction."""
    from graphbench.callbacks.optuna_pruning import OptunaPruning  # imports Optuna only in a search's trials

    for key in ("storage", "study_name", "number"):
        if trial.get(key) is None:
            raise ConfigError(f"optuna_trial.{key} is missing: optuna_trial is set by hydra/sweeper=optuna for each trial")
    return OptunaPruning(
        storage=str(trial.storage),
        study_name=str(trial.study_name),
        number=int(trial.number),
        pruner=build(trial.pruner, "optuna_trial.pruner"),
        monitor=f"val/{dataset.metric}",
        higher_is_better=bool(dataset.higher_is_better),
    )


def build_loggers(cfg: DictConfig) -> list[Logger]:
    """One logger per entry of ``cfg.logger`` (``{csv: {_target_: ...}, wandb: {...}}``); none for ``logger=none``."""
    return [build(c, f"logger.{k}") for k, c in (cfg.get("logger") or {}).items() if c]


def open_loggers(cfg: DictConfig, record: RunRecord, loggers: list[Logger], resumed_epoch: int | None = None) -> None:
    """The start of every run that logs: append the loggers of ``cfg.logger`` to ``loggers`` (the run
    frame's list, which it finishes with the run's status) and give each the run's config. A run resumed
    after epoch ``resumed_epoch`` keeps the CSV rows of epochs ``0..resumed_epoch``: that is set before
    the first write (``log_hyperparams``), which opens the CSV file."""
    loggers.extend(build_loggers(cfg))
    for lg in loggers:
        if resumed_epoch is not None and isinstance(lg, ResumableCSVLogger):
            lg.resume_after(resumed_epoch)
        lg.log_hyperparams(flat_config(record.config or {}))


@dataclass(frozen=True)
class SizedNetwork:
    """The network of a run before its weights are drawn: how to build it, its width, its parameter count."""

    make: Callable[[int], nn.Module]
    hidden_dim: int
    num_params: int


def sized_network(cfg: DictConfig, info: DatasetInfo) -> SizedNetwork:
    """The model's width (:func:`network_width`, under ``budget.max_params`` when set) and parameter
    count, logged once; the caller seeds the RNG before it draws the weights with ``make(hidden_dim)``."""
    make = network_builder(cfg, info)
    hidden_dim = network_width(cfg, make)
    with torch.device("meta"):  # counted as the width solver counts: no weights allocated or drawn
        num_params = count_parameters(make(hidden_dim))
    log.info("model %s: hidden_dim=%d, %s parameters", cfg.model.name, hidden_dim, f"{num_params:,}")
    return SizedNetwork(make, hidden_dim, num_params)


def build_trainer(
    cfg: DictConfig, callbacks: list[Callback], loggers: list[Logger], default_root_dir: str, **arguments: Any
) -> L.Trainer:
    """Lightning's ``Trainer`` of ``cfg.trainer`` with ``callbacks`` and ``loggers``: the progress bar
    resolved (:func:`show_progress_bar`), no distributed sampler (the DataModules shard the data over
    DDP ranks themselves, without Lightning's padding repeats in evaluation:
    :mod:`graphbench.data.store.sharding`), and without a profiler chosen in the config
    (``++trainer.profiler=simple``), the quiet one of :mod:`graphbench.speedups`; DDP finds unused parameters
    under ``model.edge_encoder=always``. ``arguments`` are
    further Trainer arguments of the caller's (they win over the config's)."""
    trainer_cfg = OmegaConf.to_container(cfg.trainer, resolve=True)
    assert isinstance(trainer_cfg, dict)
    trainer_cfg["enable_progress_bar"] = show_progress_bar(trainer_cfg.get("enable_progress_bar", "auto"))
    trainer_cfg["use_distributed_sampler"] = False
    if trainer_cfg.get("strategy") == "ddp" and cfg.model.get("edge_encoder") == "always":
        # an edge encoder no layer reads holds parameters without gradients, which plain DDP refuses
        trainer_cfg["strategy"] = "ddp_find_unused_parameters_true"
    profiler = trainer_cfg.pop("profiler", None) or speedups.profiler(cfg.speedups.enabled)
    if profiler is not None:
        arguments = {"profiler": profiler, **arguments}
    return build(
        OmegaConf.create(trainer_cfg),
        "trainer",
        callbacks=callbacks,
        logger=loggers or False,
        default_root_dir=default_root_dir,
        **arguments,
    )


def compile_options(cfg: DictConfig) -> dict[str, Any]:
    """The arguments of :func:`graphbench.speedups.compile_network` that ``cfg`` sets: ``model.compile_mode``
    (``default`` when the model node has none) and static shapes for batches padded to buckets
    (``dataset.pad_to=buckets``)."""
    mode = str(cfg.model.get("compile_mode", "default"))
    if mode not in speedups.COMPILE_MODES:
        raise ConfigError(f"model.compile_mode={mode} is not a torch.compile mode; valid: {', '.join(speedups.COMPILE_MODES)}")
    return {"static_shapes": cfg.dataset.get("pad_to", "none") == "buckets", "mode": mode}


def prepared_model(
    cfg: DictConfig, info: DatasetInfo, record: RunRecord, checkpoint: dict[str, Any] | None = None
) -> GraphTaskModule:
    """The task module of ``cfg`` on a dataset of ``info``: the network sized (:func:`sized_network`),
    its weights drawn from ``cfg.seed`` (the same whatever the width search built), replaced by those of
    ``cfg.ckpt_path`` when given (weights only: a fresh optimizer and schedule; ``checkpoint``: that file
    as the caller read it already), compiled under ``model.compile``; ``record`` gets the parameter
    count, width, monitor and metric."""
    sized = sized_network(cfg, info)
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    network = sized.make(sized.hidden_dim)
    if cfg.get("ckpt_path"):
        weights = checkpoint if checkpoint is not None else read_checkpoint(cfg.ckpt_path)
        load_network_weights(network, weights, cfg.ckpt_path)
        log.info("weights from %s", cfg.ckpt_path)
    if cfg.model.compile:  # the forward, in place: state_dict keys (checkpoints) stay those of eager runs
        network = speedups.compile_network(network, **compile_options(cfg))
    record.num_params, record.hidden_dim = sized.num_params, sized.hidden_dim
    record.monitor, record.metric, record.higher_is_better = info.monitor, info.metric, info.higher_is_better
    return build_task_module(cfg, network, info)
