"""graphbench.build.task: ``cfg.task`` becomes its function with the task's options bound."""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest
from omegaconf import DictConfig, OmegaConf

from graphbench.build.task import build_task
from graphbench.tasks.train import train
from graphbench.vocabulary.errors import ConfigError


def test_the_task_node_is_its_function_with_its_options(compose_cfg: Callable[..., DictConfig]) -> None:
    task = build_task(compose_cfg(["task=train", "task.checkpoint=last"]))
    assert isinstance(task, functools.partial) and task.func is train
    assert task.keywords == {"checkpoint": "last"}  # the task's name is metadata, not an argument


def test_a_task_that_names_no_function_is_one_line() -> None:
    cfg = OmegaConf.create({"task": {"_target_": "graphbench.tasks.no_such_task", "_partial_": True, "name": "x"}})
    with pytest.raises(ConfigError, match=r"^could not build task: "):
        build_task(cfg)
