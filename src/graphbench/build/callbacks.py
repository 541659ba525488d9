"""The Lightning callbacks of ``cfg.callbacks`` (``conf/callbacks/``), and the pruning callback of a
trial of an Optuna search."""

from __future__ import annotations

from lightning.pytorch.callbacks import Callback
from omegaconf import DictConfig

from graphbench.config.instantiate import build
from graphbench.vocabulary.errors import ConfigError


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
