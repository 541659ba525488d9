"""The ``train`` task: build data and model from the config, fit, test at the best validation epoch,
and write ``results.json`` and ``predictions.npz`` into the run directory."""
from __future__ import annotations

import json
import logging
import math
import time
from pathlib import Path
from typing import Any, Callable

import lightning as L
import numpy as np
from lightning.pytorch.callbacks import ModelCheckpoint
from omegaconf import DictConfig, OmegaConf
from torch import nn

from graphbench.budget import solve_width
from graphbench.callbacks.parameter_budget import ParameterBudget
from graphbench.callbacks.resources import ResourceTracker
from graphbench.config_checks import check_config
from graphbench.datamodules.base import GraphDataModule
from graphbench.datamodules.info import DatasetInfo
from graphbench.errors import GraphbenchError
from graphbench.instantiate import METADATA_KEYS, build
from graphbench.loggers import SafeWandbLogger
from graphbench.modules.network import count_parameters
from graphbench.modules.task_module import GraphTaskModule

log = logging.getLogger(__name__)


class TrainingFailed(GraphbenchError):
    """Training raised; the run's results.json records the error."""


def build_datamodule(cfg: DictConfig) -> GraphDataModule:
    pe_transform = build(cfg.pe.transform, "pe.transform", METADATA_KEYS) if cfg.pe.get("transform") else None
    return build(cfg.dataset, f"dataset '{cfg.dataset.name}'", pe_transform=pe_transform)


def network_builder(cfg: DictConfig, info: DatasetInfo) -> Callable[[int], nn.Module]:
    """``hidden_dim -> network``: everything but the width comes from the config."""
    partial = build(
        cfg.model,
        f"model '{cfg.model.name}'",
        METADATA_KEYS,
        _partial_=True,
        info=info,
        head=build(cfg.head, "head", METADATA_KEYS),
        norm=build(cfg.normalization, "normalization", METADATA_KEYS),
        pe_encoder=build(cfg.pe.encoder, "pe.encoder", METADATA_KEYS) if cfg.pe.get("encoder") else None,
    )
    return lambda hidden_dim: partial(hidden_dim=hidden_dim)


def task_module_class(info: DatasetInfo) -> type[GraphTaskModule]:
    """Graph- and node-level tasks share :class:`GraphTaskModule`; link prediction has its own."""
    if info.level == "link":
        from graphbench.modules.link_task_module import LinkTaskModule

        return LinkTaskModule
    return GraphTaskModule


def _best_epoch(history: list[dict[str, float]], monitor: str, higher_is_better: bool) -> dict[str, float] | None:
    scored = [r for r in history if monitor in r and not math.isnan(r[monitor])]
    if not scored:
        return None
    pick = max if higher_is_better else min
    return pick(scored, key=lambda r: r[monitor])  # first of equals, as ModelCheckpoint keeps it


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2, default=str))
    tmp.replace(path)


def train(cfg: DictConfig) -> dict[str, Any]:
    """Run one experiment; returns the content of ``results.json``."""
    output_dir = Path(cfg.paths.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"status": "running", "config": OmegaConf.to_container(cfg, resolve=True)}
    _write_json(output_dir / "results.json", results)
    check_config(cfg)
    L.seed_everything(cfg.seed, workers=True, verbose=False)

    datamodule = build_datamodule(cfg)
    datamodule.prepare_data()
    datamodule.setup("fit")
    info = datamodule.info
    make_network = network_builder(cfg, info)
    max_params = cfg.budget.get("max_params")
    hidden_dim = int(cfg.model.hidden_dim)
    if max_params is not None and cfg.budget.get("solve_width", True):
        hidden_dim = solve_width(make_network, int(max_params), int(cfg.model.get("width_multiple", 1))).hidden_dim
    L.seed_everything(cfg.seed, workers=True, verbose=False)  # same initial weights whatever the search built
    network = make_network(hidden_dim)
    num_params = count_parameters(network)
    log.info("model %s: hidden_dim=%d, %d parameters", cfg.model.name, hidden_dim, num_params)
    module = task_module_class(info)(
        network,
        info,
        optimizer=build(cfg.optimizer, "optimizer", METADATA_KEYS),
        scheduler=build(cfg.scheduler, "scheduler", METADATA_KEYS) if cfg.scheduler.get("_target_") else None,
    )
    checkpoint = ModelCheckpoint(
        dirpath=output_dir / "checkpoints",
        filename="best",
        monitor=info.monitor,
        mode="max" if info.higher_is_better else "min",
        save_top_k=1,
        save_weights_only=True,
        enable_version_counter=False,
    )
    tracker = ResourceTracker()
    extra_callbacks = [build(c, f"callbacks.{k}") for k, c in (cfg.get("callbacks") or {}).items() if c]
    loggers = [build(c, f"logger.{k}") for k, c in (cfg.get("logger") or {}).items() if c]
    trainer: L.Trainer = build(
        cfg.trainer,
        "trainer",
        callbacks=[checkpoint, tracker, ParameterBudget(max_params), *extra_callbacks],
        logger=loggers or False,
        default_root_dir=str(output_dir),
    )
    for lg in loggers:
        lg.log_hyperparams(results["config"])
    results.update({"num_params": num_params, "hidden_dim": hidden_dim, "monitor": info.monitor,
                    "metric": info.metric, "higher_is_better": info.higher_is_better})
    start = time.perf_counter()
    try:
        trainer.fit(module, datamodule=datamodule)
        best = _best_epoch(module.history, info.monitor, info.higher_is_better)
        if best is None:
            raise RuntimeError(f"no epoch produced {info.monitor}; is validation disabled (limit_val_batches=0)?")
        test_metrics = trainer.test(module, datamodule=datamodule, ckpt_path="best", verbose=False)[0]
    except Exception as exc:
        results["status"] = f"failed: {type(exc).__name__}: {exc}"
        _write_json(output_dir / "results.json", results)
        _finish_loggers(loggers, results)
        if isinstance(exc, GraphbenchError):
            raise
        raise TrainingFailed(f"training failed: {type(exc).__name__}: {exc} (details in {output_dir})") from exc
    metrics = {k: v for k, v in best.items() if k.startswith(("train/", "val/")) and not k.endswith("_best")}
    metrics.update({k: float(v) for k, v in test_metrics.items()})
    results.update(
        {
            "status": "completed",
            "best_epoch": int(best["epoch"]),
            "epochs_trained": len(module.history),
            "metrics": metrics,
            "time_per_epoch_s": tracker.time_per_epoch_s,
            "total_time_s": time.perf_counter() - start,
            "peak_memory_mb": ResourceTracker.peak_memory_mb(module.device),
        }
    )
    np.savez(output_dir / "predictions.npz", **{k: v.numpy() for k, v in module.test_predictions.items()})
    _write_json(output_dir / "results.json", results)
    _finish_loggers(loggers, results)
    return results


def _finish_loggers(loggers: list[Any], results: dict[str, Any]) -> None:
    for lg in loggers:
        if isinstance(lg, SafeWandbLogger):
            summary = {k: v for k, v in results.items() if k != "config"}
            lg.log_summary({**summary.pop("metrics", {}), **summary})
            lg.finish()
