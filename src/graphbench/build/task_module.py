"""The task module (a LightningModule) of the dataset's ``module`` node, and its parts that the
config's groups choose: the ``optimizer``, the ``scheduler``, the loss (``dataset.module.loss``) and
the model's consistency regularization (``model.consistency``, GRAND's). IGB's full-batch fits
(:class:`graphbench.analysis.igb.fit.FullBatchRecipe`) build their optimizer, loss and consistency
term with the same builders."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from omegaconf import DictConfig, OmegaConf
from torch import Tensor, nn
from torch.optim import Optimizer

from graphbench import speedups
from graphbench.config.instantiate import METADATA_KEYS, build
from graphbench.data.info import DatasetInfo
from graphbench.modules.losses import ConsistencyLoss
from graphbench.modules.task_module import GraphTaskModule
from graphbench.vocabulary.errors import ConfigError


def build_optimizer(cfg: DictConfig) -> Callable[[Iterable[nn.Parameter]], Optimizer]:
    """``parameters -> optimizer``: the ``optimizer`` group's node (``_partial_: true``); under
    ``speedups=auto``, Adam and AdamW fused (:func:`graphbench.speedups.optimizer`) unless
    ``trainer.precision`` is a mixed one."""
    make = build(cfg.optimizer, "optimizer", METADATA_KEYS)
    if not cfg.speedups.enabled:
        return make
    return speedups.optimizer(make, mixed_precision=str(cfg.trainer.get("precision", "32")).endswith("mixed"))


def build_scheduler(cfg: DictConfig) -> Callable[..., Any] | None:
    """``optimizer -> scheduler``: the ``scheduler`` group's node; ``None`` for ``scheduler=none`` (no ``_target_``)."""
    return build(cfg.scheduler, "scheduler", METADATA_KEYS) if cfg.scheduler.get("_target_") else None


def module_node(cfg: DictConfig) -> DictConfig:
    """The dataset's ``module`` node: the task module's ``_target_``, its loss and protocol arguments."""
    node = cfg.dataset.get("module")
    if node is None:
        raise ConfigError(
            f"dataset '{cfg.dataset.name}' names no task module: its YAML needs a `module:` node (see conf/dataset/cycles.yaml)"
        )
    return node


def build_loss(cfg: DictConfig) -> Callable[[Tensor, Tensor], Tensor] | None:
    """The loss ``loss(prediction, target)`` of the dataset's ``module.loss`` node; ``None`` where it is
    null (a link-level module then scores with its own)."""
    node = module_node(cfg).get("loss")
    return None if node is None else build(node, "dataset.module.loss")


def build_consistency(cfg: DictConfig, info: DatasetInfo) -> ConsistencyLoss | None:
    """The model's consistency regularization (``model.consistency``, GRAND's), ``None`` where the model
    config has none; it trains node- and graph-level tasks only (one :class:`ConfigError` line)."""
    node = cfg.model.get("consistency")
    if node is None:
        return None
    if info.level == "link":
        raise ConfigError(
            f"model.consistency (model '{cfg.model.name}') trains node- and graph-level tasks; dataset "
            f"'{cfg.dataset.name}' is link-level: set model.consistency=null"
        )
    if info.task_type != "multiclass":
        raise ConfigError(
            f"model.consistency (GRAND's consistency regularization) needs a multiclass task; dataset "
            f"'{cfg.dataset.name}' is {info.task_type}: set model.consistency=null"
        )
    return build(node, "model.consistency")


def build_task_module(cfg: DictConfig, network: nn.Module, info: DatasetInfo) -> GraphTaskModule:
    """The LightningModule from the dataset's ``module`` node (its ``_target_`` and protocol arguments),
    given the network, the dataset's facts, the loss (:func:`build_loss`), the optimizer and the
    scheduler, and the model's consistency regularization (:func:`build_consistency`) where the model
    config has one."""
    node = module_node(cfg)
    make_module = build(node, "dataset.module", ("loss",), _partial_=True)
    objective: dict[str, Any] = {"loss": build_loss(cfg)} if "loss" in node else {}
    consistency = build_consistency(cfg, info)
    if consistency is not None:
        objective["consistency"] = consistency
    return make_module(
        network,
        info,
        optimizer=build_optimizer(cfg),
        scheduler=build_scheduler(cfg),
        config=OmegaConf.to_container(cfg, resolve=True),  # saved in its checkpoints (graphbench.run.checkpoints)
        **objective,
    )
