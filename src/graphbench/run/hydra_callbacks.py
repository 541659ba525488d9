"""Hydra callbacks: the end-of-multirun account of which jobs did not complete and which were skipped."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from graphbench.run.record import COMPLETED, RESULTS_FILENAME, RunRecord, is_pruned


class JobOutcome(NamedTuple):
    """One job of a multirun: its directory, its overrides (space-separated), its status, and whether it
    was skipped: ``resume=auto`` found a completed run there and did not run it again."""

    job_dir: Path
    overrides: str
    status: str
    skipped: bool


def job_outcomes(sweep_dir: Path, since: float = 0.0) -> list[JobOutcome]:
    """The :class:`JobOutcome` of every job below ``sweep_dir`` that Hydra started at or after ``since``
    (a Unix time), in job order. A job directory is one holding Hydra's ``.hydra/overrides.yaml``,
    which Hydra rewrites when it starts the job, before the run itself.

    A job is ``skipped`` when its ``results.json`` holds a completed run and is older than that
    ``overrides.yaml``: the run that wrote it finished before this launch started the job (a fresh
    or resumed run rewrites ``results.json`` after Hydra wrote ``overrides.yaml``). A job without a
    readable ``results.json`` (it never started a run) has a ``failed: ...`` status."""
    outcomes = []
    for overrides_file in sweep_dir.glob("**/.hydra/overrides.yaml"):
        job_dir = overrides_file.parent.parent
        started_ns = overrides_file.stat().st_mtime_ns
        if started_ns < since * 1e9:
            continue
        overrides = " ".join(str(o) for o in OmegaConf.load(overrides_file))
        results = job_dir / RESULTS_FILENAME
        try:
            status = RunRecord.read(results).status
            skipped = status == COMPLETED and results.stat().st_mtime_ns < started_ns
        except (OSError, ValueError) as exc:
            status, skipped = f"failed: no readable {RESULTS_FILENAME} ({type(exc).__name__})", False
        outcomes.append(JobOutcome(job_dir, overrides, status, skipped))
    return sorted(outcomes, key=lambda o: [int(p) if p.isdigit() else p for p in o.job_dir.parts])


def summary_lines(outcomes: list[JobOutcome], sweep_dir: str) -> tuple[list[str], list[str]]:
    """``(stdout lines, stderr lines)`` of the end-of-multirun account: how many jobs completed and
    how many of them were skipped, one line per skipped job (on stdout: under the submitit launchers
    the job's own "skipped" log line goes to its log file only), one line per job that did not
    complete (on stderr). Trials an Optuna search pruned (``pruned at epoch N``) are counted apart,
    neither completed nor failed: pruning them was the search's decision."""
    pruned = [o for o in outcomes if is_pruned(o.status)]
    not_completed = [o for o in outcomes if o.status != COMPLETED and not is_pruned(o.status)]
    skipped = [o for o in outcomes if o.skipped]
    head = f"multirun: {len(outcomes) - len(not_completed) - len(pruned)} of {len(outcomes)} jobs completed"
    if skipped:
        head += f", {len(skipped)} of them skipped as completed before (resume=auto)"
    if pruned:
        head += f", {len(pruned)} pruned by the Optuna search"
    out = [f"{head} ({sweep_dir})"]
    out += [f"  skipped: {o.job_dir.name} [{o.overrides}]: already completed" for o in skipped]
    err = [f"  not completed: {o.job_dir.name} [{o.overrides}]: {o.status}" for o in not_completed]
    return out, err


class MultirunSummary(Callback):
    """At the end of a multirun, prints how many jobs completed, lists the ones skipped because they
    had completed before (``resume=auto``, e.g. a sweep relaunched into the same ``hydra.sweep.dir``)
    and every job that did not complete with its overrides and status; exits with code 1 if any did
    not complete, so a sweep that lost jobs never looks like a success to a shell or a scheduler."""

    def __init__(self) -> None:
        self._start = 0.0

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        self._start = time.time() - 1.0  # file times have coarse resolution on some filesystems

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep_dir = str(config.hydra.sweep.dir)
        out, err = summary_lines(job_outcomes(Path(sweep_dir), self._start), sweep_dir)
        print("\n".join(out), flush=True)
        if err:
            print("\n".join(err), file=sys.stderr, flush=True)
            raise SystemExit(1)
