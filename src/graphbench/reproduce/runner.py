"""Run a table's multiruns, one cell at a time, resuming what an earlier invocation left.

Before a cell runs, each of its run directories is classified by its ``results.json``:

* ``completed`` — skipped (said so); a cell whose runs all completed is not launched at all;
* ``interrupted`` (also ``preempted``, or a ``running`` record left by a killed process) — resumed: ``resume=auto`` continues it from ``checkpoints/last.ckpt``;
* ``failed`` (``failed: ...``, ``diverged at epoch N``, an unreadable file) — rerun from scratch: its directory is moved to
  ``<cell>/failed/<run>.<k>`` (kept, never deleted) and the run starts afresh;
* ``new`` — no ``results.json`` yet.

The multirun's own output goes to ``<cell>/launch.log``; the console gets one line per cell.
"""

from __future__ import annotations

import subprocess
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from graphbench.report.collect import load_run
from graphbench.reproduce.plan import CellPlan, RunSlot
from graphbench.run.record import RESULTS_FILENAME
from graphbench.run.threads import cpu_allowance

#: the states of a run directory, in the order the console line names them
STATES: tuple[str, ...] = ("completed", "interrupted", "failed", "new")
#: the log of a cell's multirun, in its sweep directory
LAUNCH_LOG: str = "launch.log"
#: where failed runs are moved before they rerun, in the cell's sweep directory
FAILED_FOLDER: str = "failed"


def run_state(slot: RunSlot) -> str:
    """``completed``, ``interrupted``, ``failed`` or ``new``: what the run directory holds (see the module docstring)."""
    results = slot.path / RESULTS_FILENAME
    if not results.exists():
        return "new"
    status = load_run(results).status
    if status == "completed":
        return "completed"
    if status.startswith(("failed", "diverged")):
        return "failed"
    return "interrupted"


def move_aside(path: Path, cell_dir: Path) -> Path:
    """Move a failed run's directory to ``<cell>/failed/<name>.<k>`` (the first free ``k``) and return where."""
    folder = cell_dir / FAILED_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    k = 1
    while (folder / f"{path.name}.{k}").exists():
        k += 1
    target = folder / f"{path.name}.{k}"
    path.rename(target)
    return target


def describe(states: Mapping[str, int]) -> str:
    """``3 runs: 2 completed before (skipped), 1 interrupted (resumed)``: the non-zero counts, in :data:`STATES` order."""
    words = {
        "completed": "completed before (skipped)",
        "interrupted": "interrupted (resumed)",
        "failed": "failed (rerun)",
        "new": "new",
    }
    total = sum(states.values())
    parts = [f"{states[state]} {words[state]}" for state in STATES if states.get(state)]
    return f"{total} run{'s' if total != 1 else ''}: " + ", ".join(parts)


@dataclass(frozen=True)
class CellOutcome:
    """What running a cell did: the states before, the multirun's exit code (``None``: not launched), seconds."""

    plan: CellPlan
    before: dict[str, int]
    exit_code: int | None
    seconds: float


#: ``launch(argv, log_path, env)``: runs a command with its output appended to ``log_path``; returns its exit code
Launch = Callable[[list[str], Path, Mapping[str, str]], int]


def launch_subprocess(argv: list[str], log_path: Path, env: Mapping[str, str]) -> int:
    """Run ``argv`` with stdout and stderr appended to ``log_path``; its exit code. On Ctrl-C (which the
    child receives too) it waits for the child to record its runs as interrupted, then re-raises."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("a") as log:
        log.write(f"$ {' '.join(argv)}\n")
        log.flush()
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=dict(env))
        try:
            return process.wait()
        except KeyboardInterrupt:
            process.wait()
            raise


def thread_env(environ: Mapping[str, str], jobs: int, cpu_count: int) -> dict[str, str]:
    """``environ`` with ``OMP_NUM_THREADS`` = cores // jobs when several runs share the CPU (unless already set)."""
    env = dict(environ)
    if jobs > 1 and "OMP_NUM_THREADS" not in env:
        env["OMP_NUM_THREADS"] = str(max(1, cpu_count // jobs))
    return env


def run_cell(plan: CellPlan, env: Mapping[str, str], launch: Launch, say: Callable[[str], None]) -> CellOutcome:
    """Classify the cell's runs, move failed ones aside, and launch its multirun unless every run completed."""
    states = {slot: run_state(slot) for slot in plan.runs}
    before = dict(Counter(states.values()))
    say(f"{plan.cell.label}: {describe(before)}")
    if before.get("completed", 0) == len(plan.runs):
        return CellOutcome(plan, before, None, 0.0)
    for slot, state in states.items():
        if state == "failed":
            say(f"  {slot.path} failed before: moved to {move_aside(slot.path, plan.sweep_dir)}, rerun")
    start = time.perf_counter()
    code = launch(plan.argv(), plan.sweep_dir / LAUNCH_LOG, env)
    seconds = time.perf_counter() - start
    done = sum(1 for slot in plan.runs if run_state(slot) == "completed")
    say(f"  done in {format_duration(seconds)}: {done} of {len(plan.runs)} runs completed (log: {plan.sweep_dir / LAUNCH_LOG})")
    return CellOutcome(plan, before, code, seconds)


def format_duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s`` or ``2 h 07 min``."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def cpu_count() -> int:
    """The cores this process may use: its affinity capped by its cgroup's CPU quota."""
    return cpu_allowance().usable
