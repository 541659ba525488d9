"""graphbench.build.callbacks.build_callbacks: ``conf/callbacks/`` composed into a run's Lightning callbacks, by name,
each built as its node stands, the dataset's monitor and direction interpolated; entries overridden,
removed and added by presets; the history finds its checkpoint when the Trainer sets up. build_trainer's DDP strategy."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import lightning as L
import optuna
import pytest
from lightning.pytorch.callbacks import Callback, EarlyStopping, LearningRateMonitor, ModelCheckpoint, Timer
from omegaconf import DictConfig

from graphbench.build.callbacks import build_callbacks
from graphbench.callbacks.divergence import DivergenceGuard
from graphbench.callbacks.history import EpochHistory
from graphbench.callbacks.last_checkpoint import LastCheckpoint
from graphbench.callbacks.ntk import NTKAlignment
from graphbench.callbacks.optuna_pruning import OptunaPruning
from graphbench.callbacks.parameter_budget import ParameterBudget
from graphbench.callbacks.predictions import TestPredictions
from graphbench.callbacks.resources import ResourceTracker
from graphbench.callbacks.rng_state import RNGState
from graphbench.vocabulary.errors import ConfigError

#: conf/callbacks/default.yaml, in its order, and the type each entry builds
DEFAULTS = {
    "checkpoint": ModelCheckpoint,
    "history": EpochHistory,
    "last_checkpoint": LastCheckpoint,
    "rng_state": RNGState,
    "resources": ResourceTracker,
    "predictions": TestPredictions,
    "budget": ParameterBudget,
    "divergence": DivergenceGuard,
}


def test_the_default_callbacks_in_order_with_the_dataset_monitor(compose_cfg: Callable[..., DictConfig], tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    callbacks = build_callbacks(compose_cfg([], run_dir=run_dir))
    assert list(callbacks) == list(DEFAULTS)
    assert [type(c) for c in callbacks.values()] == list(DEFAULTS.values())
    checkpoint = callbacks["checkpoint"]
    assert isinstance(checkpoint, ModelCheckpoint)
    assert (checkpoint.monitor, checkpoint.mode, checkpoint.filename) == ("val/accuracy", "max", "best")
    assert checkpoint.save_top_k == 1 and checkpoint.save_weights_only
    assert Path(str(checkpoint.dirpath)) == (run_dir / "checkpoints").resolve()
    history = callbacks["history"]
    assert isinstance(history, EpochHistory)
    set_up(history, callbacks)
    assert history.checkpoint is checkpoint and history.monitor == "val/accuracy" and history.echo is True
    last = callbacks["last_checkpoint"]
    assert isinstance(last, LastCheckpoint)
    assert last.path == (run_dir / "checkpoints" / "last.ckpt").resolve() and last.every_s == 30
    budget = callbacks["budget"]
    assert isinstance(budget, ParameterBudget) and budget.max_params is None


def test_a_lower_is_better_metric_is_minimized(compose_cfg: Callable[..., DictConfig]) -> None:
    callbacks = build_callbacks(compose_cfg(["callbacks=early_stopping", "dataset=zinc"]))
    for name in ("checkpoint", "early_stopping"):
        callback = callbacks[name]
        assert isinstance(callback, ModelCheckpoint | EarlyStopping)
        assert (callback.monitor, callback.mode) == ("val/mae", "min"), name


def test_arguments_are_overridden_from_the_command_line(compose_cfg: Callable[..., DictConfig]) -> None:
    overrides = ["callbacks.checkpoint.save_top_k=3", "checkpoint_every_s=0", "budget=100k", "callbacks.history.echo=false"]
    callbacks = build_callbacks(compose_cfg(overrides))
    checkpoint, history, last, budget = (callbacks[k] for k in ("checkpoint", "history", "last_checkpoint", "budget"))
    assert isinstance(checkpoint, ModelCheckpoint) and checkpoint.save_top_k == 3
    assert isinstance(history, EpochHistory)
    set_up(history, callbacks)
    assert history.echo is False  # the config's value, although no progress bar is shown
    assert isinstance(last, LastCheckpoint) and last.every_s == 0
    assert isinstance(budget, ParameterBudget) and budget.max_params == 100_000


def test_an_entry_naming_its_own_monitor_keeps_it(compose_cfg: Callable[..., DictConfig]) -> None:
    overrides = ["callbacks.checkpoint.monitor=val/loss", "callbacks.checkpoint.mode=min"]
    callbacks = build_callbacks(compose_cfg(overrides))
    checkpoint, history = callbacks["checkpoint"], callbacks["history"]
    assert isinstance(checkpoint, ModelCheckpoint) and (checkpoint.monitor, checkpoint.mode) == ("val/loss", "min")
    assert isinstance(history, EpochHistory)
    set_up(history, callbacks)
    assert history.monitor == "val/loss"


@pytest.mark.parametrize("removal", ["~callbacks.history", "callbacks.history=null"])
def test_an_entry_is_removed(compose_cfg: Callable[..., DictConfig], removal: str) -> None:
    callbacks = build_callbacks(compose_cfg([removal]))
    assert list(callbacks) == [name for name in DEFAULTS if name != "history"]


def test_history_without_its_checkpoint_is_refused_in_one_line(compose_cfg: Callable[..., DictConfig]) -> None:
    callbacks = build_callbacks(compose_cfg(["~callbacks.checkpoint"]))
    with pytest.raises(ConfigError, match=r"^callbacks.history records the epoch a ModelCheckpoint .* \(~callbacks.history\)$"):
        set_up(callbacks["history"], callbacks)
    callbacks = build_callbacks(compose_cfg(["~callbacks.checkpoint", "~callbacks.history"]))
    assert "checkpoint" not in callbacks and "history" not in callbacks


def set_up(history: Callback, callbacks: dict[str, Callback]) -> None:
    """``history`` set up by a Trainer of ``callbacks`` without a progress bar."""
    trainer = L.Trainer(callbacks=list(callbacks.values()), logger=False, enable_progress_bar=False, enable_checkpointing=True)
    history.setup(trainer, L.LightningModule(), "fit")


@pytest.mark.parametrize(
    ("choice", "added"),
    [
        ("callbacks=early_stopping", {"early_stopping": EarlyStopping}),
        ("callbacks=lr_monitor", {"lr_monitor": LearningRateMonitor}),
        ("callbacks=ntk", {"ntk": NTKAlignment}),
        ("callbacks=[default,early_stopping]", {"early_stopping": EarlyStopping}),
        ("callbacks=[early_stopping,lr_monitor]", {"early_stopping": EarlyStopping, "lr_monitor": LearningRateMonitor}),
        ("callbacks=[ntk,lr_monitor]", {"ntk": NTKAlignment, "lr_monitor": LearningRateMonitor}),
    ],
)
def test_presets_add_to_the_defaults(compose_cfg: Callable[..., DictConfig], choice: str, added: dict[str, type]) -> None:
    callbacks = build_callbacks(compose_cfg([choice]))
    assert {name: type(c) for name, c in callbacks.items()} == {**DEFAULTS, **added}


def test_the_presets_arguments(compose_cfg: Callable[..., DictConfig]) -> None:
    overrides = ["callbacks=[early_stopping,lr_monitor]", "callbacks.early_stopping.patience=7"]
    callbacks = build_callbacks(compose_cfg(overrides))
    stopping, lr_monitor = callbacks["early_stopping"], callbacks["lr_monitor"]
    assert isinstance(stopping, EarlyStopping)
    assert (stopping.monitor, stopping.mode, stopping.patience, stopping.min_delta) == ("val/accuracy", "max", 7, 0.0)
    assert isinstance(lr_monitor, LearningRateMonitor) and lr_monitor.logging_interval == "epoch"


def test_a_callback_added_by_its_target(compose_cfg: Callable[..., DictConfig]) -> None:
    overrides = ["+callbacks.every_epoch={_target_: lightning.pytorch.callbacks.ModelCheckpoint, save_top_k: -1}"]
    callbacks = build_callbacks(compose_cfg(overrides))
    assert list(callbacks) == [*DEFAULTS, "every_epoch"]
    every_epoch = callbacks["every_epoch"]
    # the dataset's monitor is interpolated in the entries that name it, not given to others
    assert isinstance(every_epoch, ModelCheckpoint) and every_epoch.monitor is None and every_epoch.save_top_k == -1


def test_the_documented_timer_is_added(compose_cfg: Callable[..., DictConfig]) -> None:
    """docs/checkpoints_and_loggers.md: any Lightning callback by its ``_target_`` on the command line."""
    overrides = ['+callbacks.timer={_target_: lightning.pytorch.callbacks.Timer, duration: "00:01:00:00"}']
    timer = build_callbacks(compose_cfg(overrides))["timer"]
    assert isinstance(timer, Timer) and timer.time_remaining() == timedelta(hours=1).total_seconds()


def test_a_pruned_search_trial_gets_the_pruning_callback_of_its_trial(compose_cfg: Callable[..., DictConfig]) -> None:
    """``optuna_trial`` (set by the search for each job) with a pruner adds ``optuna_pruning``, judging the
    dataset's monitored metric in its direction; without a pruner, or outside a search, nothing is added."""
    pruner = "{_target_:optuna.pruners.MedianPruner,n_startup_trials:3}"
    trial = f"+optuna_trial={{storage:'/s/o.journal',study_name:cycles-gine,number:4,pruner:{pruner}}}"
    callbacks = build_callbacks(compose_cfg([trial]))
    pruning = callbacks["optuna_pruning"]
    assert isinstance(pruning, OptunaPruning) and list(callbacks)[-1] == "optuna_pruning"
    assert (pruning.storage, pruning.study_name, pruning.number) == ("/s/o.journal", "cycles-gine", 4)
    assert (pruning.monitor, pruning.higher_is_better) == ("val/accuracy", True)
    assert isinstance(pruning.pruner, optuna.pruners.MedianPruner)
    assert "optuna_pruning" not in build_callbacks(compose_cfg([trial.replace(pruner, "null")]))
    assert "optuna_pruning" not in build_callbacks(compose_cfg())
    with pytest.raises(ConfigError, match=r"optuna_trial\.number is missing"):
        build_callbacks(compose_cfg([f"+optuna_trial={{storage:'/s/o.journal',study_name:x,pruner:{pruner}}}"]))
