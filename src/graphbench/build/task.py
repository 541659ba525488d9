"""The task of ``cfg.task`` (``conf/task/``): a function called as ``task(cfg, overrides=...)``."""

from __future__ import annotations

from collections.abc import Callable

from omegaconf import DictConfig

from graphbench.config.instantiate import METADATA_KEYS, build
from graphbench.run.record import RunRecord


def build_task(cfg: DictConfig) -> Callable[..., RunRecord]:
    """``cfg.task`` (a ``_partial_`` of a function of :mod:`graphbench.tasks`, or of one of the user's)
    with its options bound; the caller passes the config and the overrides."""
    return build(cfg.task, "task", METADATA_KEYS)
