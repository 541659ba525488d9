"""Hydra callbacks: the end-of-multirun account of which jobs did not complete."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from graphbench.record import RESULTS_FILENAME, RunRecord


def job_outcomes(sweep_dir: Path, since: float = 0.0) -> list[tuple[Path, str, str]]:
    """``(job dir, overrides, status)`` of every job below ``sweep_dir`` whose ``results.json`` was
    written at or after ``since`` (a Unix time) or that has none (a job that never started a run),
    in job order. A job directory is one holding Hydra's ``.hydra/overrides.yaml``."""
    outcomes = []
    for overrides_file in sorted(sweep_dir.glob("**/.hydra/overrides.yaml"), key=lambda p: str(p)):
        job_dir = overrides_file.parent.parent
        if overrides_file.stat().st_mtime < since:
            continue
        overrides = " ".join(str(o) for o in OmegaConf.load(overrides_file))
        results = job_dir / RESULTS_FILENAME
        try:
            status = RunRecord.read(results).status
        except (OSError, ValueError) as exc:
            status = f"failed: no readable {RESULTS_FILENAME} ({type(exc).__name__})"
        outcomes.append((job_dir, overrides, status))
    return sorted(outcomes, key=lambda o: [int(p) if p.isdigit() else p for p in o[0].parts])


class MultirunSummary(Callback):
    """At the end of a multirun, prints how many jobs completed and lists every other one with its
    overrides and status; exits with code 1 if any did not complete, so a sweep that lost jobs never
    looks like a success to a shell or a scheduler."""

    def __init__(self) -> None:
        self._start = 0.0

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        self._start = time.time() - 1.0  # file times have coarse resolution on some filesystems

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        outcomes = job_outcomes(Path(config.hydra.sweep.dir), self._start)
        not_completed = [o for o in outcomes if o[2] != "completed"]
        print(
            f"multirun: {len(outcomes) - len(not_completed)} of {len(outcomes)} jobs completed ({config.hydra.sweep.dir})",
            flush=True,
        )
        if not_completed:
            for job_dir, overrides, status in not_completed:
                print(f"  not completed: {job_dir.name} [{overrides}]: {status}", file=sys.stderr, flush=True)
            raise SystemExit(1)
