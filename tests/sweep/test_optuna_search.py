"""The ask/tell search: settings checked in one line, each trial's value read from its run's
results.json, trials claimed by number up to n_trials (a number past it is failed unrun), and the
loop run end to end through a launcher that writes results.json files as run.py's jobs do."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import optuna
import pytest
import yaml
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.utils import JobReturn
from omegaconf import OmegaConf

from graphbench.run.optuna_storage import open_storage
from graphbench.run.record import RESULTS_FILENAME, RunRecord
from graphbench.sweep.optuna_search import (
    SearchSettings,
    claim_trials,
    outcome_of,
    record_value,
    run_search,
    trial_override,
)
from graphbench.sweep.wandb import SweepError

TPE = {"_target_": "optuna.samplers.TPESampler", "seed": 0, "n_startup_trials": 2}


def settings(**changes: Any) -> SearchSettings:
    values: dict[str, Any] = {
        "sampler": TPE,
        "pruner": None,
        "directions": ["maximize"],
        "objectives": None,
        "storage": None,
        "study_name": "s",
        "n_trials": 4,
        "n_jobs": 1,
        "max_failure_rate": 0.0,
        "params": {"optimizer.lr": "choice(0.5, 0.25, 0.125)"},
    }
    return SearchSettings(**{**values, **changes})


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"directions": ["up"]}, r"hydra.sweeper.direction='up' is not one of \['minimize', 'maximize'\]"),
        ({"directions": ["maximize", "minimize"]}, r"lists 2 directions: name as many results.json values"),
        ({"objectives": ["val/accuracy"], "directions": ["maximize", "minimize"]}, "has 1 values for 2 directions"),
        ({"n_jobs": 0}, "must be at least 1"),
        ({"max_failure_rate": 2.0}, "is not between 0 and 1"),
        (
            {"pruner": {"_target_": "optuna.pruners.MedianPruner"}, "directions": ["maximize"] * 2, "objectives": ["a", "b"]},
            "Optuna prunes single-objective studies only",
        ),
    ],
)
def test_settings_are_checked_in_one_line(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(SweepError, match=message):
        settings(**changes)


def write(run_dir: Path, status: str, value: float | None) -> Path:
    """``results.json`` of a run whose monitored metric, val/accuracy (higher is better), is ``value``."""
    run_dir.mkdir(parents=True, exist_ok=True)
    metrics = {} if value is None else {"val/accuracy": value, "test/accuracy": value / 2}
    record = RunRecord(status=status, config={}, monitor="val/accuracy", higher_is_better=True, metrics=metrics, num_params=1234)
    record.write(run_dir / RESULTS_FILENAME)
    return run_dir


def test_a_trials_outcome_is_its_results_json(tmp_path: Path) -> None:
    done = write(tmp_path / "0", "completed", 0.75)
    assert outcome_of(done, None) == outcome_of(done, ["val/accuracy"])
    assert (outcome_of(done, None).state, outcome_of(done, None).values) == ("COMPLETE", [0.75])
    assert outcome_of(done, ["test/accuracy", "num_params"]).values == [0.375, 1234.0]
    missing = outcome_of(done, ["time_per_epoch_s"])
    assert (missing.state, missing.status) == ("FAIL", "completed, but results.json has no finite ['time_per_epoch_s']")
    pruned = outcome_of(write(tmp_path / "1", "pruned at epoch 2", 0.5), None)
    assert (pruned.state, pruned.values, pruned.status) == ("PRUNED", None, "pruned at epoch 2")
    failed = outcome_of(write(tmp_path / "2", "diverged at epoch 0", None), None)
    assert (failed.state, failed.status) == ("FAIL", "diverged at epoch 0")
    assert outcome_of(tmp_path / "3", None).status == "failed: no readable results.json (FileNotFoundError)"
    record = RunRecord.read(done / RESULTS_FILENAME)
    assert record_value(record, "num_params") == 1234.0 and record_value(record, "val/loss") is None


def test_the_trial_override_parses_back_to_its_node() -> None:
    pruner = {"_target_": "optuna.pruners.MedianPruner", "n_startup_trials": 5, "n_warmup_steps": 0}
    storage = "postgresql+psycopg://me:p'w\\d@host:5432/db"
    override = trial_override(storage, "cycles-gine", 3, pruner)
    (parsed,) = OverridesParser.create().parse_overrides([override])
    assert parsed.get_key_element() == "+optuna_trial"
    assert parsed.value() == {"storage": storage, "study_name": "cycles-gine", "number": 3, "pruner": pruner}
    assert OverridesParser.create().parse_overrides([trial_override("/s/o.journal", "x", 0, None)])[0].value()["pruner"] is None


def test_trials_are_claimed_by_number_and_one_past_n_trials_is_failed_unrun(tmp_path: Path) -> None:
    study = optuna.create_study(study_name="s", storage=open_storage(str(tmp_path / "s.journal")))
    assert [t.number for t in claim_trials(study, 3, 2, {})] == [0, 1]
    assert [t.number for t in claim_trials(study, 3, 2, {})] == [2]  # the study holds 2: one more
    assert claim_trials(study, 3, 2, {}) == []
    # another worker asked between this worker's count and its ask: the number it gets is past the end
    stale = SimpleNamespace(get_trials=lambda deepcopy: [], ask=study.ask, tell=study.tell)
    assert claim_trials(stale, 3, 2, {}) == []  # type: ignore[arg-type]
    surplus = study.trials[3]
    assert surplus.state == optuna.trial.TrialState.FAIL and surplus.params == {}
    assert surplus.user_attrs == {"status": "not run: the study already held 3 trials (hydra.sweeper.n_trials)"}


class FakeLauncher:
    """Runs each job as run.py would record it: ``results.json`` in ``<sweep dir>/<hydra.sweep.subdir>``
    with ``val/accuracy`` = ``optimizer.lr``; lr 0.125 is pruned at epoch 1, lr 0.0625 diverges."""

    def __init__(self, sweep_dir: Path) -> None:
        self.sweep_dir = sweep_dir
        self.batches: list[list[list[str]]] = []

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> list[JobReturn]:
        self.batches.append([list(job) for job in job_overrides])
        returns = []
        for job in job_overrides:
            values = {o.get_key_element(): o.value() for o in OverridesParser.create().parse_overrides(list(job))}
            run_dir = self.sweep_dir / str(values["hydra.sweep.subdir"])
            lr = float(values["optimizer.lr"])
            status = {0.125: "pruned at epoch 1", 0.0625: "diverged at epoch 0"}.get(lr, "completed")
            write(run_dir, status, lr)
            returns.append(JobReturn(hydra_cfg=OmegaConf.create({"hydra": {"runtime": {"output_dir": str(run_dir)}}})))
        return returns


def test_the_search_tells_each_trial_what_its_run_recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sweep_dir = tmp_path / "sweep"
    launcher = FakeLauncher(sweep_dir)
    run_search(settings(n_trials=5, n_jobs=2, max_failure_rate=1.0), launcher, ["seed=1"], sweep_dir)  # type: ignore[arg-type]
    assert [len(batch) for batch in launcher.batches] == [2, 2, 1]
    study = optuna.load_study(study_name="s", storage=open_storage(str(sweep_dir / "optuna.journal")))
    assert [t.number for t in study.trials] == [0, 1, 2, 3, 4]
    for trial in study.trials:
        record = RunRecord.read(sweep_dir / str(trial.number) / RESULTS_FILENAME)
        assert trial.user_attrs["status"] == record.status
        assert trial.user_attrs["run_dir"] == str(sweep_dir / str(trial.number))
        assert trial.user_attrs["overrides"] == ["seed=1", f"optimizer.lr={trial.params['optimizer.lr']!r}"]
        if record.completed:
            assert trial.state.name == "COMPLETE" and trial.value == record.metrics["val/accuracy"]
        else:
            assert trial.state.name == "PRUNED" and trial.value is None  # no intermediate value was reported here
    best = max(t.value for t in study.trials if t.state.name == "COMPLETE")
    results = yaml.safe_load((sweep_dir / "optimization_results.yaml").read_text())
    assert results["best_value"] == best == study.best_value
    assert results["best_overrides"] == ["seed=1", f"optimizer.lr={best!r}"]
    out = capsys.readouterr().out
    assert f"Best overrides: seed=1 optimizer.lr={best!r}\n" in out and f"Best value: {best}\n" in out
    # a second invocation finds the study complete: nothing more runs
    run_search(settings(n_trials=5, storage=str(sweep_dir / "optuna.journal")), launcher, ["seed=1"], sweep_dir)  # type: ignore[arg-type]
    assert len(launcher.batches) == 3


def test_failures_beyond_max_failure_rate_end_the_search(tmp_path: Path) -> None:
    sweep_dir = tmp_path / "sweep"
    space = {"optimizer.lr": "choice(0.0625)"}
    with pytest.raises(SweepError, match=r"1 of 1 trials failed \(hydra.sweeper.max_failure_rate=0.0\)"):
        run_search(settings(params=space), FakeLauncher(sweep_dir), [], sweep_dir)  # type: ignore[arg-type]
    with pytest.raises(SweepError, match="nothing to search"):
        run_search(settings(params={}), FakeLauncher(sweep_dir), ["seed=1"], sweep_dir)  # type: ignore[arg-type]


def test_the_pruner_that_never_prunes_is_no_pruner() -> None:
    never = {"_target_": "optuna.pruners.NopPruner"}
    assert settings(pruner=never).pruner is None
    assert settings(pruner=never, directions=["maximize", "minimize"], objectives=["val/accuracy", "num_params"]).pruner is None


def test_a_search_that_goes_against_its_metrics_direction_stops_in_one_line(tmp_path: Path) -> None:
    sweep_dir = tmp_path / "sweep"
    with pytest.raises(
        SweepError, match=r"hydra\.sweeper\.direction=minimize, but the runs' monitored metric is higher-is-better: set"
    ):
        run_search(settings(directions=["minimize"]), FakeLauncher(sweep_dir), [], sweep_dir)  # type: ignore[arg-type]
    minimized = settings(directions=["minimize"], objectives=["val/accuracy"], n_trials=1, study_name="explicit")
    run_search(minimized, FakeLauncher(sweep_dir), [], sweep_dir)  # type: ignore[arg-type]  # named objectives: the user's call


def test_a_sampler_or_pruner_named_as_a_value_is_its_shipped_option() -> None:
    named = settings(sampler="random", pruner="median")
    assert named.sampler == {"_target_": "optuna.samplers.RandomSampler", "seed": None}
    assert named.pruner is not None and named.pruner["_target_"] == "optuna.pruners.MedianPruner"
    assert settings(pruner="none").pruner is None
    with pytest.raises(SweepError, match=r"hydra\.sweeper\.pruner='mediam' is not one of \['hyperband', 'median', 'none'\]"):
        settings(pruner="mediam")


def test_several_directions_make_a_pareto_front_of_results_json_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sweep_dir = tmp_path / "sweep"
    several = settings(
        sampler="nsgaii", directions=["maximize", "minimize"], objectives=["val/accuracy", "test/accuracy"], n_trials=3
    )
    run_search(several, FakeLauncher(sweep_dir), [], sweep_dir)  # type: ignore[arg-type]
    study = optuna.load_study(study_name="s", storage=open_storage(str(sweep_dir / "optuna.journal")))
    for trial in study.trials:
        if trial.state.name == "COMPLETE":  # test/accuracy is half of val/accuracy in the fake runs
            assert trial.values == [trial.params["optimizer.lr"], trial.params["optimizer.lr"] / 2]
    results = yaml.safe_load((sweep_dir / "optimization_results.yaml").read_text())
    assert results["objectives"] == ["val/accuracy", "test/accuracy"]
    assert sorted(s["trial"] for s in results["solutions"]) == sorted(t.number for t in study.best_trials)
    assert "Pareto front (val/accuracy: maximize, test/accuracy: minimize):" in capsys.readouterr().out
