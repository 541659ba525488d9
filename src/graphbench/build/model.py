"""The network of a run: its builder from the ``model``, ``head``, ``normalization`` and ``pe``
groups, its width (given, or solved under the parameter budget), and the task module around it,
seeded, loaded from a checkpoint and compiled as the config says."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import lightning as L
import torch
from omegaconf import DictConfig
from torch import nn

from graphbench import speedups
from graphbench.build.task_module import build_task_module
from graphbench.config.instantiate import METADATA_KEYS, build
from graphbench.data.datamodules import DataModule
from graphbench.data.info import DatasetInfo
from graphbench.modules.budget import solve_width
from graphbench.modules.layers.grand import INITIALIZATIONS, initialize
from graphbench.modules.network import count_parameters
from graphbench.modules.task_module import GraphTaskModule
from graphbench.run.checkpoints import load_network_weights, read_checkpoint
from graphbench.run.record import RunRecord
from graphbench.vocabulary.errors import ArgumentError, ConfigError

log = logging.getLogger(__name__)


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
        path="model",
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
        try:
            return solve_width(
                make_network, int(max_params), int(cfg.model.get("width_multiple", 1)), min_width=min_width
            ).hidden_dim
        except ArgumentError as exc:  # max_params is budget.max_params
            raise exc.at("budget") from None
    return int(cfg.model.hidden_dim)


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


def compile_options(cfg: DictConfig, pads_batches: bool) -> dict[str, Any]:
    """The arguments of :func:`graphbench.speedups.compile_network`: ``model.compile_mode`` (``default``
    when the model node has none), and static shapes where the DataModule ``pads_batches`` (every batch
    padded to one of a few shapes: :attr:`graphbench.data.datamodules.DataModule.pads_batches`)."""
    mode = str(cfg.model.get("compile_mode", "default"))
    if mode not in speedups.COMPILE_MODES:
        raise ConfigError(f"model.compile_mode={mode} is not a torch.compile mode; valid: {', '.join(speedups.COMPILE_MODES)}")
    return {"static_shapes": pads_batches, "mode": mode}


def prepared_model(
    cfg: DictConfig, datamodule: DataModule, record: RunRecord, checkpoint: dict[str, Any] | None = None
) -> GraphTaskModule:
    """The task module of ``cfg`` on the data of ``datamodule``: the network sized (:func:`sized_network`),
    its weights drawn from ``cfg.seed`` (the same whatever the width search built), replaced by those of
    ``cfg.ckpt_path`` when given (weights only: a fresh optimizer and schedule; ``checkpoint``: that file
    as the caller read it already), compiled under ``model.compile`` (with static shapes where the
    DataModule pads its batches); ``record`` gets the parameter count, width, monitor and metric."""
    info = datamodule.info
    sized = sized_network(cfg, info)
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    network = sized.make(sized.hidden_dim)
    if cfg.get("ckpt_path"):
        weights = checkpoint if checkpoint is not None else read_checkpoint(cfg.ckpt_path)
        load_network_weights(network, weights, cfg.ckpt_path)
        log.info("weights from %s", cfg.ckpt_path)
    if cfg.model.compile:  # the forward, in place: state_dict keys (checkpoints) stay those of eager runs
        network = speedups.compile_network(network, **compile_options(cfg, datamodule.pads_batches))
    record.num_params, record.hidden_dim = sized.num_params, sized.hidden_dim
    record.monitor, record.metric, record.higher_is_better = info.monitor, info.metric, info.higher_is_better
    return build_task_module(cfg, network, info)
