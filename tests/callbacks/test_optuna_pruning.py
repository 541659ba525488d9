"""OptunaPruning reports the best value so far of the monitored metric to its trial each validation epoch
(read back from the study in the journal file), and stops the run when the median pruner rejects it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import optuna
import pytest
import torch

from graphbench.callbacks.optuna_pruning import OptunaPruning
from graphbench.run.optuna_storage import open_storage
from graphbench.vocabulary.errors import ConfigError


def trainer(epoch: int, value: float | None, sanity: bool = False) -> SimpleNamespace:
    """What the callback reads of a Trainer on rank 0 of one process."""
    metrics = {} if value is None else {"val/accuracy": torch.tensor(value)}
    return SimpleNamespace(
        sanity_checking=sanity,
        is_global_zero=True,
        callback_metrics=metrics,
        current_epoch=epoch,
        strategy=SimpleNamespace(broadcast=lambda obj: obj),
        should_stop=False,
    )


def study_with_two_finished_trials(storage: str, direction: str = "maximize") -> optuna.Study:
    """Trials 0 and 1 reported 0.625 and 0.875 at epochs 0, 1, 2 and completed; trial 2 is asked, running."""
    study = optuna.create_study(study_name="s", storage=open_storage(storage), direction=direction)
    for value in (0.625, 0.875):
        trial = study.ask()
        for epoch in range(3):
            trial.report(value, step=epoch)
        study.tell(trial, value)
    study.ask()
    return study


def callback(storage: str, higher_is_better: bool = True) -> OptunaPruning:
    pruner = optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=1)
    return OptunaPruning(storage, "s", 2, pruner, monitor="val/accuracy", higher_is_better=higher_is_better)


def test_reports_the_best_value_so_far_and_stops_when_the_median_pruner_rejects(tmp_path: Path) -> None:
    storage = str(tmp_path / "study.journal")
    study = study_with_two_finished_trials(storage)
    pruning = callback(storage)
    pruning.setup(trainer(0, None), None, "fit")  # type: ignore[arg-type]
    pruning.on_validation_end(trainer(0, 0.9, sanity=True), None)  # type: ignore[arg-type]  # the sanity check: nothing
    epochs = [trainer(0, 0.8125), trainer(1, 0.5), trainer(2, 0.375)]
    for epoch in epochs:  # epoch 0 is a warm-up step (never pruned); then the best so far, 0.8125, beats the median 0.75
        pruning.on_validation_end(epoch, None)  # type: ignore[arg-type]
    assert [e.should_stop for e in epochs] == [False, False, False] and pruning.pruned_epoch is None
    assert study.trials[2].intermediate_values == {0: 0.8125, 1: 0.8125, 2: 0.8125}

    study.tell(2, 0.8125)
    study.ask()  # trial 3: a worse one
    worse = OptunaPruning(
        storage, "s", 3, optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=1), "val/accuracy", True
    )
    worse.setup(trainer(0, None), None, "fit")  # type: ignore[arg-type]
    steps = [trainer(0, 0.6875), trainer(1, 0.625)]
    for step in steps:
        worse.on_validation_end(step, None)  # type: ignore[arg-type]
    assert [s.should_stop for s in steps] == [False, True]  # 0.6875 < 0.8125, the median of {0.625, 0.875, 0.8125}
    assert worse.pruned_epoch == 1
    assert study.trials[3].intermediate_values == {0: 0.6875, 1: 0.6875}
    assert worse.state_dict() == {"best": 0.6875}


def test_a_lower_is_better_metric_keeps_its_minimum(tmp_path: Path) -> None:
    storage = str(tmp_path / "study.journal")
    study = study_with_two_finished_trials(storage, direction="minimize")
    pruning = callback(storage, higher_is_better=False)
    pruning.setup(trainer(0, None), None, "fit")  # type: ignore[arg-type]
    for epoch, value in enumerate([0.5, 0.75, 0.25]):
        pruning.on_validation_end(trainer(epoch, value), None)  # type: ignore[arg-type]
    assert study.trials[2].intermediate_values == {0: 0.5, 1: 0.5, 2: 0.25}


def test_a_study_whose_direction_is_not_the_metrics_is_refused_in_one_line(tmp_path: Path) -> None:
    storage = str(tmp_path / "study.journal")
    study_with_two_finished_trials(storage, direction="minimize")
    with pytest.raises(ConfigError, match=r"directions \['minimize'\], but a pruner judges val/accuracy, which is maximized"):
        callback(storage).setup(trainer(0, None), None, "fit")  # type: ignore[arg-type]


def test_an_unknown_trial_is_refused_in_one_line(tmp_path: Path) -> None:
    storage = str(tmp_path / "study.journal")
    study_with_two_finished_trials(storage)
    pruning = OptunaPruning(storage, "s", 7, optuna.pruners.NopPruner(), "val/accuracy", True)
    with pytest.raises(ConfigError, match=r"the study 's' in .* has no trial 7"):
        pruning.setup(trainer(0, None), None, "fit")  # type: ignore[arg-type]
