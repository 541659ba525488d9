"""The Lightning ``Trainer`` of ``cfg.trainer``, with the run's callbacks and loggers."""

from __future__ import annotations

import sys
from typing import Any

import lightning as L
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.loggers.logger import Logger
from omegaconf import DictConfig, OmegaConf

from graphbench import speedups
from graphbench.config.instantiate import build


def show_progress_bar(setting: Any) -> bool:
    """``trainer.enable_progress_bar``: ``auto`` shows Lightning's bar on a terminal only; elsewhere
    (a log file, a cluster job) each epoch is one line instead of a pile of bar refreshes."""
    if setting == "auto":
        return sys.stdout.isatty()
    return bool(setting)


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
