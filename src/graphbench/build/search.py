"""The Optuna sampler and pruner of a search (``hydra/sweeper=optuna``): the nodes
``hydra.sweeper.sampler`` and ``hydra.sweeper.pruner`` (``conf/hydra/sweeper/{sampler,pruner}/``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from graphbench.config.instantiate import build

if TYPE_CHECKING:
    import optuna


def build_search_sampler(node: Mapping[str, Any]) -> optuna.samplers.BaseSampler:
    """The study's sampler, from its ``_target_`` node."""
    return build(node, "hydra.sweeper.sampler")  # type: ignore[arg-type]


def build_search_pruner(node: Mapping[str, Any] | None) -> optuna.pruners.BasePruner:
    """The study's pruner, from its ``_target_`` node; Optuna's ``NopPruner`` (never prunes) without one."""
    import optuna  # imported by a search only

    return optuna.pruners.NopPruner() if node is None else build(node, "hydra.sweeper.pruner")  # type: ignore[arg-type]
