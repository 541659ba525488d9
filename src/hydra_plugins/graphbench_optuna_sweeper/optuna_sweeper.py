"""The Hydra plugin class of ``hydra/sweeper=optuna`` (conf/hydra/sweeper/optuna.yaml).

Hydra imports every module of the ``hydra_plugins`` namespace package at start-up and registers the
plugin classes defined there; this one keeps that import light (Optuna is imported when a search
starts) and hands the search to :func:`graphbench.sweep.optuna_search.run_search`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra.core.plugins import Plugins
from hydra.plugins.launcher import Launcher
from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, ListConfig, OmegaConf


def _plain(node: Any) -> Any:
    """A config node as plain Python (dicts, lists, scalars); anything else as it is."""
    if isinstance(node, (DictConfig, ListConfig)):
        return OmegaConf.to_container(node, resolve=True)
    return node


class OptunaSweeper(Sweeper):
    """Optuna's ask/tell search, each batch of ``n_jobs`` trials run through the configured launcher.
    The keys are those of conf/hydra/sweeper/optuna.yaml (``_recursive_: false``: ``sampler`` and
    ``pruner`` arrive as config nodes and are built when the search starts)."""

    def __init__(
        self,
        sampler: Any,
        direction: Any,
        storage: str | None,
        study_name: str | None,
        n_trials: int,
        n_jobs: int,
        params: Any = None,
        pruner: Any = None,
        objectives: Any = None,
        max_failure_rate: float = 0.0,
    ) -> None:
        from graphbench.sweep.optuna_search import SearchSettings

        directions = _plain(direction)
        objectives = _plain(objectives)
        self.settings = SearchSettings(
            sampler=_plain(sampler),
            pruner=_plain(pruner),
            directions=[str(d) for d in directions] if isinstance(directions, list) else [str(directions)],
            objectives=None if objectives is None else [str(o) for o in objectives],
            storage=None if storage is None else str(storage),
            study_name=None if study_name is None else str(study_name),
            n_trials=int(n_trials),
            n_jobs=int(n_jobs),
            max_failure_rate=float(max_failure_rate),
            params=_plain(params) or {},
        )
        self.launcher: Launcher | None = None
        self.sweep_dir: Path | None = None

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        self.launcher = Plugins.instance().instantiate_launcher(
            config=config, hydra_context=hydra_context, task_function=task_function
        )
        self.sweep_dir = Path(str(config.hydra.sweep.dir))

    def sweep(self, arguments: Sequence[str]) -> None:
        from graphbench.sweep.optuna_search import run_search

        assert self.launcher is not None and self.sweep_dir is not None, "Hydra calls setup() before sweep()"
        run_search(self.settings, self.launcher, list(arguments), self.sweep_dir)
