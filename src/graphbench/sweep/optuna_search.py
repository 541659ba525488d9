"""The Optuna search behind ``hydra/sweeper=optuna`` (the plugin class is
``hydra_plugins.graphbench_optuna_sweeper.optuna_sweeper.OptunaSweeper``; its settings are
conf/hydra/sweeper/optuna.yaml).

Ask and tell (Optuna >= 4): the search asks the study for up to ``n_jobs`` trials, runs them as one
batch through the configured Hydra launcher (basic, joblib, or a submitit array), then reads each
trial's ``results.json`` and tells the study: ``completed`` -> COMPLETE with the run's values,
``pruned at epoch N`` -> PRUNED (its value is the last one its pruning callback reported, which is the
run's value at its best epoch: :mod:`graphbench.callbacks.optuna_pruning`), anything else -> FAIL.
A trial's values are ``results.json`` values, read by name (``objectives``): the run's monitored
metric by default.

Many workers, one study: ``n_trials`` counts the trials of the study, whoever asked them. Optuna
numbers a study's trials 0, 1, 2, ... in the order they are created, atomically in every storage
(the journal file under its lock, a database under a row lock on the study), so the search is trials
``0 .. n_trials - 1``: a worker runs a trial only when its number is below ``n_trials``, and stops
when the study holds ``n_trials`` trials. No trial runs twice and none beyond ``n_trials``; when
workers ask at the same moment, one may get a number past the end: it is told FAIL at once, never run,
with the user attribute ``status: not run: ...``.

Each trial's job gets the overrides of its parameters and ``+optuna_trial={storage, study_name,
number, pruner}``, so its pruning callback reports to the right trial; its run directory is
``<sweep dir>/<trial number>``. Every trial records its ``status``, ``run_dir`` and ``overrides`` as
user attributes.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from hydra.core.utils import JobReturn
from hydra.plugins.launcher import Launcher
from omegaconf import OmegaConf

from graphbench.build.search import build_search_pruner, build_search_sampler
from graphbench.conf import CONFIG_DIR
from graphbench.run.optuna_storage import is_database_url, open_storage
from graphbench.run.record import RESULTS_FILENAME, RunRecord, is_pruned
from graphbench.sweep.search_space import SearchSpace, params_overrides
from graphbench.sweep.wandb import SweepError

if TYPE_CHECKING:
    import optuna

log = logging.getLogger(__name__)

#: the journal file of a search whose ``storage`` is null, in its sweep directory
DEFAULT_JOURNAL: str = "optuna.journal"
#: the file the search writes its best trial(s) to, in its sweep directory
RESULTS_YAML: str = "optimization_results.yaml"
#: the config key each trial's job gets (``+optuna_trial={...}``)
TRIAL_KEY: str = "optuna_trial"
DIRECTIONS: tuple[str, ...] = ("minimize", "maximize")
#: the pruner that never prunes (conf/hydra/sweeper/pruner/none.yaml)
NO_PRUNER: str = "optuna.pruners.NopPruner"


def named_option(group: str, value: Any) -> Any:
    """``value`` of ``hydra.sweeper.<sampler|pruner>``: a config node as it is, or an option's name
    (``hydra.sweeper.pruner=median``, the same as ``hydra/sweeper/pruner=median``) read from the shipped
    ``conf/hydra/sweeper/<group>/<name>.yaml``; one :class:`SweepError` line naming the options otherwise."""
    if not isinstance(value, str):
        return value
    folder = CONFIG_DIR / "hydra" / "sweeper" / group
    options = sorted(p.stem for p in folder.glob("*.yaml"))
    if value not in options:
        raise SweepError(f"hydra.sweeper.{group}={value!r} is not one of {options}")
    return OmegaConf.to_container(OmegaConf.load(folder / f"{value}.yaml"), resolve=True)


@dataclass(frozen=True)
class SearchSettings:
    """``hydra.sweeper``'s keys, checked. ``sampler`` and ``pruner`` are config nodes (``_target_``);
    ``pruner`` None (or Optuna's ``NopPruner``, ``hydra/sweeper/pruner=none``) means no pruning;
    ``storage`` None means a journal file in the sweep directory; ``objectives`` None means the
    run's monitored metric."""

    sampler: Mapping[str, Any]
    pruner: Mapping[str, Any] | None
    directions: list[str]
    objectives: list[str] | None
    storage: str | None
    study_name: str | None
    n_trials: int
    n_jobs: int
    max_failure_rate: float
    params: Mapping[str, Any]

    def __post_init__(self) -> None:
        object.__setattr__(self, "sampler", named_option("sampler", self.sampler))
        object.__setattr__(self, "pruner", named_option("pruner", self.pruner))
        if self.pruner is not None and self.pruner.get("_target_") == NO_PRUNER:
            object.__setattr__(self, "pruner", None)
        for direction in self.directions:
            if direction not in DIRECTIONS:
                raise SweepError(f"hydra.sweeper.direction={direction!r} is not one of {list(DIRECTIONS)}")
        if not self.directions:
            raise SweepError("hydra.sweeper.direction is empty: give maximize, minimize or a list of them")
        if self.n_trials < 1 or self.n_jobs < 1:
            raise SweepError(f"hydra.sweeper.n_trials={self.n_trials} and n_jobs={self.n_jobs} must be at least 1")
        if not 0.0 <= self.max_failure_rate <= 1.0:
            raise SweepError(f"hydra.sweeper.max_failure_rate={self.max_failure_rate} is not between 0 and 1")
        wanted = len(self.directions)
        if self.objectives is None and wanted > 1:
            raise SweepError(
                f"hydra.sweeper.direction lists {wanted} directions: name as many results.json values in "
                "hydra.sweeper.objectives, e.g. [val/accuracy, num_params]"
            )
        if self.objectives is not None and len(self.objectives) != wanted:
            raise SweepError(
                f"hydra.sweeper.objectives={list(self.objectives)} has {len(self.objectives)} values for {wanted} directions"
            )
        if self.pruner is not None and wanted > 1:
            raise SweepError("Optuna prunes single-objective studies only: use hydra/sweeper/pruner=none with several directions")


@dataclass(frozen=True)
class TrialOutcome:
    """How a trial's run ended, read from its ``results.json``: the study's ``state`` name
    (COMPLETE, PRUNED, FAIL), its ``values`` (COMPLETE only), the run's ``status`` and directory, and
    the direction of its monitored metric (``higher_is_better``; ``None`` when not recorded)."""

    state: str
    values: list[float] | None
    status: str
    run_dir: Path
    higher_is_better: bool | None = None


def record_value(record: RunRecord, key: str) -> float | None:
    """``results.json``'s value ``key``: a ``metrics`` entry (``val/accuracy``) or a top-level number
    (``num_params``, ``time_per_epoch_s``); ``None`` when absent or not finite."""
    raw = record.metrics.get(key) if key in record.metrics else getattr(record, key, None) if "/" not in key else None
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
        return None
    return float(raw)


def outcome_of(run_dir: Path, objectives: Sequence[str] | None) -> TrialOutcome:
    """The :class:`TrialOutcome` of the run in ``run_dir``; ``objectives`` None: its monitored metric."""
    try:
        record = RunRecord.read(run_dir / RESULTS_FILENAME)
    except (OSError, ValueError, TypeError) as exc:
        return TrialOutcome("FAIL", None, f"failed: no readable {RESULTS_FILENAME} ({type(exc).__name__})", run_dir)
    if is_pruned(record.status):
        return TrialOutcome("PRUNED", None, record.status, run_dir, record.higher_is_better)
    if not record.completed:
        return TrialOutcome("FAIL", None, record.status, run_dir)
    keys = list(objectives) if objectives is not None else [record.monitor or ""]
    values = [record_value(record, key) for key in keys]
    missing = [key for key, value in zip(keys, values) if value is None]
    if missing:
        return TrialOutcome("FAIL", None, f"completed, but {RESULTS_FILENAME} has no finite {missing}", run_dir)
    return TrialOutcome("COMPLETE", [v for v in values if v is not None], record.status, run_dir, record.higher_is_better)


def trial_override(storage: str, study_name: str, number: int, pruner: Mapping[str, Any] | None) -> str:
    """``+optuna_trial={...}``: what a trial's job needs to find its trial and report to it."""
    node = {"storage": storage, "study_name": study_name, "number": number, "pruner": dict(pruner) if pruner else None}
    return f"+{TRIAL_KEY}={grammar_value(node)}"


def grammar_value(value: Any) -> str:
    """``value`` (dicts, lists, strings, numbers, booleans, None) in Hydra's override grammar; strings quoted."""
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{k}:{grammar_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(grammar_value(v) for v in value) + "]"
    if isinstance(value, str):  # a quote is escaped; backslashes only before a quote or the closing one (Hydra's rule)
        return "'" + re.sub(r"(\\*)('|$)", lambda m: m.group(1) * 2 + ("\\'" if m.group(2) else ""), value) + "'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return repr(value)


def claim_trials(study: optuna.Study, n_trials: int, n_jobs: int, distributions: Mapping[str, Any]) -> list[optuna.Trial]:
    """Up to ``n_jobs`` new trials of ``study`` numbered below ``n_trials`` (see the module docstring);
    an empty list once the study holds ``n_trials`` trials."""
    from optuna.trial import TrialState

    wanted = min(n_jobs, n_trials - len(study.get_trials(deepcopy=False)))
    claimed = []
    for _ in range(max(wanted, 0)):
        trial = study.ask(fixed_distributions=dict(distributions))
        if trial.number < n_trials:
            claimed.append(trial)
            continue
        trial.set_user_attr("status", f"not run: the study already held {n_trials} trials (hydra.sweeper.n_trials)")
        study.tell(trial, state=TrialState.FAIL)
        break
    return claimed


def check_direction(settings: SearchSettings, outcome: TrialOutcome) -> None:
    """A search of the monitored metric (``objectives`` null) must go the metric's way: one
    :class:`SweepError` line, after the first run that says which way that is, when it does not."""
    if settings.objectives is not None or outcome.higher_is_better is None:
        return
    wanted = "maximize" if outcome.higher_is_better else "minimize"
    if settings.directions != [wanted]:
        raise SweepError(
            f"hydra.sweeper.direction={settings.directions[0]}, but the runs' monitored metric is "
            f"{'higher' if outcome.higher_is_better else 'lower'}-is-better: set hydra.sweeper.direction={wanted}"
        )


def job_dir(ret: JobReturn) -> Path:
    """The run directory of a job Hydra ran."""
    assert ret.hydra_cfg is not None
    return Path(str(ret.hydra_cfg.hydra.runtime.output_dir))


def run_search(settings: SearchSettings, launcher: Launcher, arguments: Sequence[str], sweep_dir: Path) -> None:
    """The search of ``settings`` over ``hydra.sweeper.params`` and the command line's ``arguments``."""
    import optuna

    space = SearchSpace.parse([*params_overrides(settings.params), *arguments])
    if not space.distributions:
        raise SweepError("nothing to search: give hydra.sweeper.params, or a choice/range/interval on the command line")
    sweep_dir.mkdir(parents=True, exist_ok=True)
    storage = settings.storage or str(sweep_dir / DEFAULT_JOURNAL)
    if not is_database_url(storage):  # the jobs find the journal file wherever they run
        storage = str(Path(storage).expanduser().resolve())
    pruner = build_search_pruner(settings.pruner)
    study = optuna.create_study(
        study_name=settings.study_name,
        storage=open_storage(storage),
        sampler=build_search_sampler(settings.sampler),
        pruner=pruner,
        directions=settings.directions,
        load_if_exists=True,
    )
    log.info(
        "Optuna study %r in %s, sampler %s, pruner %s",
        study.study_name,
        storage,
        type(study.sampler).__name__,
        type(pruner).__name__,
    )
    job_idx, failures, runs = 0, 0, 0
    while trials := claim_trials(study, settings.n_trials, settings.n_jobs, space.distributions):
        overrides = [
            [
                *space.overrides(trial.params),
                trial_override(storage, study.study_name, trial.number, settings.pruner),
                f"hydra.sweep.subdir={trial.number}",
            ]
            for trial in trials
        ]
        returns = launcher.launch(overrides, initial_job_idx=job_idx)
        job_idx += len(returns)
        for trial, ret, job in zip(trials, returns, overrides):
            outcome = outcome_of(job_dir(ret), settings.objectives)
            trial.set_user_attr("status", outcome.status)
            trial.set_user_attr("run_dir", str(outcome.run_dir))
            trial.set_user_attr("overrides", job[:-2])
            study.tell(trial, outcome.values, state=optuna.trial.TrialState[outcome.state])
            failures += outcome.state == "FAIL"
            check_direction(settings, outcome)
        runs += len(returns)
        if failures / runs > settings.max_failure_rate:
            raise SweepError(
                f"{failures} of {runs} trials failed (hydra.sweeper.max_failure_rate={settings.max_failure_rate}); "
                "their status is in each trial's results.json"
            )
    report_best(study, settings, sweep_dir)


def report_best(study: optuna.Study, settings: SearchSettings, sweep_dir: Path) -> None:
    """Print the study's best trial (its value, overrides and run directory; the Pareto front with
    several directions) and write it to ``<sweep dir>/optimization_results.yaml``."""
    from optuna.trial import TrialState

    states = [t.state for t in study.get_trials(deepcopy=False)]
    counts = ", ".join(f"{states.count(s)} {s.name.lower()}" for s in (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL))
    print(f"Optuna study {study.study_name!r}: {len(states)} trials ({counts})", flush=True)
    if TrialState.COMPLETE not in states:
        print("No trial completed: no best trial", flush=True)
        return
    names = settings.objectives or ["value"]
    if len(settings.directions) == 1:
        trial = study.best_trial
        print(f"Best trial: {trial.number} ({trial.user_attrs.get('run_dir')})", flush=True)
        print(f"Best overrides: {' '.join(trial.user_attrs.get('overrides', []))}", flush=True)
        print(f"Best parameters: {trial.params}", flush=True)
        print(f"Best value: {trial.value}", flush=True)
        results = {"name": study.study_name, "best_trial": trial.number, "best_params": trial.params, "best_value": trial.value}
        results |= {"best_overrides": trial.user_attrs.get("overrides", []), "best_run_dir": trial.user_attrs.get("run_dir")}
    else:
        print(f"Pareto front ({', '.join(f'{n}: {d}' for n, d in zip(names, settings.directions))}):", flush=True)
        fronts = []
        for trial in study.best_trials:
            print(f"  trial {trial.number}: {trial.values} {' '.join(trial.user_attrs.get('overrides', []))}", flush=True)
            fronts.append(
                {
                    "trial": trial.number,
                    "params": trial.params,
                    "values": trial.values,
                    "run_dir": trial.user_attrs.get("run_dir"),
                }
            )
        results = {"name": study.study_name, "objectives": names, "solutions": fronts}
    (sweep_dir / RESULTS_YAML).write_text(yaml.safe_dump(results, sort_keys=False))
