"""graphbench.build.task_module: the optimizer, scheduler, loss and consistency term of a config, and
the task module built from them (IGB's fits build theirs with the same functions)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
import torch
from omegaconf import DictConfig, open_dict

from graphbench.build.data import build_datamodule
from graphbench.build.model import network_builder
from graphbench.build.task_module import (
    build_consistency,
    build_loss,
    build_optimizer,
    build_scheduler,
    build_task_module,
)
from graphbench.modules.losses import ConsistencyLoss
from graphbench.vocabulary.errors import ConfigError


def test_the_optimizer_and_scheduler_of_their_groups(compose_cfg: Callable[..., DictConfig]) -> None:
    cfg = compose_cfg(["optimizer.lr=0.25"])
    optimizer = build_optimizer(cfg)([torch.nn.Parameter(torch.zeros(2))])
    assert optimizer.param_groups[0]["lr"] == 0.25
    assert build_scheduler(compose_cfg(["scheduler=none"])) is None


@pytest.mark.parametrize(
    ("overrides", "fused"),
    [([], True), (["optimizer=adamw"], True), (["speedups=off"], None), (["++trainer.precision=bf16-mixed"], None)],
)
def test_adam_is_fused_under_speedups_except_in_mixed_precision(
    compose_cfg: Callable[..., DictConfig], overrides: list[str], fused: bool | None
) -> None:
    optimizer = build_optimizer(compose_cfg(overrides))([torch.nn.Parameter(torch.zeros(2))])
    assert optimizer.defaults["fused"] is fused
    assert optimizer.defaults["foreach"] is (None if fused else True)


def test_the_loss_is_the_dataset_modules(compose_cfg: Callable[..., DictConfig]) -> None:
    loss = build_loss(compose_cfg(["dataset=cora"]))
    assert loss is not None
    assert float(loss(torch.tensor([[0.0, 0.0]]), torch.tensor([1]))) == pytest.approx(float(torch.log(torch.tensor(2.0))))


def test_the_consistency_term_is_the_models_and_refused_on_links_and_other_than_multiclass_tasks(
    compose_cfg: Callable[..., DictConfig],
) -> None:
    cfg = compose_cfg(["dataset=peptides-func", "model=grand"])
    info = build_datamodule(cfg).info
    multiclass = dataclasses.replace(info, task_type="multiclass")
    assert isinstance(build_consistency(cfg, multiclass), ConsistencyLoss)
    assert build_consistency(compose_cfg(["dataset=peptides-func", "model=gcn"]), info) is None
    with pytest.raises(
        ConfigError,
        match=r"^model.consistency \(model 'grand'\) trains node- and graph-level tasks; dataset 'peptides-func' is link-level",
    ):
        build_consistency(cfg, dataclasses.replace(multiclass, level="link"))
    with pytest.raises(ConfigError, match=r"needs a multiclass task; dataset 'peptides-func' is multilabel"):
        build_consistency(cfg, info)


def test_the_task_module_takes_the_built_parts(compose_cfg: Callable[..., DictConfig]) -> None:
    cfg = compose_cfg(["dataset=peptides-func", "model=gcn", "optimizer.lr=0.125"])
    info = build_datamodule(cfg).info
    module = build_task_module(cfg, network_builder(cfg, info)(8), info)
    assert type(module.loss_fn) is type(build_loss(cfg)) and module.loss_fn is not None
    with open_dict(cfg):
        del cfg.dataset.module
    with pytest.raises(ConfigError, match=r"^dataset 'peptides-func' names no task module: its YAML needs a `module:` node"):
        build_task_module(cfg, network_builder(compose_cfg(["dataset=peptides-func"]), info)(8), info)
