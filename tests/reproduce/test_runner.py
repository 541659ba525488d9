"""Resuming a table: completed runs skipped, interrupted ones resumed, failed ones moved aside and rerun."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from graphbench.reproduce.plan import Options, plan_table
from graphbench.reproduce.runner import describe, format_duration, launch_subprocess, run_cell, run_state, thread_env
from graphbench.reproduce.spec import load_spec
from tests.paths import CONF, REPO, SHARED_DATA
from tests.reproduce._runs import write_result


def cora_plan(tmp_path: Path, seeds: int = 3):
    root = tmp_path / "data"
    (root / "Planetoid/Cora/raw").mkdir(parents=True, exist_ok=True)
    (root / "Planetoid/CiteSeer/raw").mkdir(parents=True, exist_ok=True)
    return plan_table(load_spec("kipf-welling-2017", CONF), Options(seeds, False, 1, None, tmp_path / "out", ()), root).cells[0]


class FakeMultirun:
    """Stands in for ``graphbench -m``: completes every run of the plan that is not completed, as resume=auto does."""

    def __init__(self, plan) -> None:
        self.plan = plan
        self.calls: list[list[str]] = []
        self.ran: list[str] = []

    def __call__(self, argv: list[str], log: Path, env: Mapping[str, str]) -> int:
        self.calls.append(argv)
        for slot in self.plan.runs:
            if run_state(slot) != "completed":
                self.ran.append(f"{slot.path.name}:{run_state(slot)}")
                write_result(slot.path, seed=slot.seed)
        return 0


def test_an_interrupted_table_resumes_skipping_completed_runs_and_rerunning_failed_ones(tmp_path: Path) -> None:
    plan = cora_plan(tmp_path)
    seed0, seed1, seed2 = plan.runs
    write_result(seed0.path, seed=0)  # completed before
    write_result(seed1.path, seed=1, status="failed: CUDA out of memory", metrics={})
    write_result(seed2.path, seed=2, status="interrupted", metrics={})
    assert [run_state(slot) for slot in plan.runs] == ["completed", "failed", "interrupted"]

    lines: list[str] = []
    launch = FakeMultirun(plan)
    outcome = run_cell(plan, {}, launch, lines.append)
    assert outcome.before == {"completed": 1, "failed": 1, "interrupted": 1} and outcome.exit_code == 0
    assert lines[0] == "Cora / GCN: 3 runs: 1 completed before (skipped), 1 interrupted (resumed), 1 failed (rerun)"
    moved = plan.sweep_dir / "failed" / "seed1.1"
    assert lines[1] == f"  {seed1.path} failed before: moved to {moved}, rerun"
    assert (moved / "results.json").is_file()
    assert launch.ran == ["seed1:new", "seed2:interrupted"]  # seed0 not touched; seed1 starts afresh
    assert lines[2].startswith("  done in ") and lines[2].endswith(
        f"3 of 3 runs completed (log: {plan.sweep_dir / 'launch.log'})"
    )

    lines.clear()
    again = run_cell(plan, {}, launch, lines.append)
    assert again.exit_code is None and len(launch.calls) == 1  # every run completed: not launched
    assert lines == ["Cora / GCN: 3 runs: 3 completed before (skipped)"]


def test_more_seeds_later_keep_the_completed_directories(tmp_path: Path) -> None:
    first = cora_plan(tmp_path, seeds=2)
    for slot in first.runs:
        write_result(slot.path, seed=slot.seed)
    more = cora_plan(tmp_path, seeds=3)
    launch = FakeMultirun(more)
    run_cell(more, {}, launch, lambda line: None)
    assert launch.ran == ["seed2:new"]


def test_describe_duration_and_threads() -> None:
    assert describe({"new": 1}) == "1 run: 1 new"
    assert format_duration(42.4) == "42 s"
    assert format_duration(185) == "3 min 05 s"
    assert format_duration(7620) == "2 h 07 min"
    assert thread_env({}, 4, 16) == {"OMP_NUM_THREADS": "4"}
    assert thread_env({"OMP_NUM_THREADS": "1"}, 4, 16) == {"OMP_NUM_THREADS": "1"}
    assert thread_env({}, 1, 16) == {}


def test_launch_subprocess_appends_the_command_and_its_output_to_the_log(tmp_path: Path) -> None:
    log = tmp_path / "cell" / "launch.log"
    argv = [sys.executable, "-c", "print('hello'); raise SystemExit(3)"]
    assert launch_subprocess(argv, log, dict(os.environ)) == 3
    assert launch_subprocess(argv, log, dict(os.environ)) == 3
    assert log.read_text() == f"$ {' '.join(argv)}\nhello\n" * 2


@pytest.mark.real_data
@pytest.mark.slow
def test_a_table_killed_mid_way_is_finished_by_the_same_command(tmp_path: Path) -> None:
    """``graphbench-reproduce`` and its cell's multirun SIGKILLed (the whole process group, as a node loss
    would) once the second cell's run has claimed its directory; the same command then finishes the table,
    the first cell's run skipped."""
    if not (SHARED_DATA / "Planetoid").is_dir():
        pytest.skip(f"real data root not found at {SHARED_DATA}")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "graphbench.reproduce", "kipf-welling-2017", "--fast", "--out", str(out)]
    command += [f"paths.data_dir={SHARED_DATA}", f"paths.cache_dir={tmp_path / 'cache'}"]
    env = {**os.environ, "WANDB_MODE": "offline", "OMP_NUM_THREADS": "1"}
    table_dir = out / "kipf-welling-2017-fast"
    first = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 600
    while len(list(table_dir.glob("*/*/results.json"))) < 2 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    assert first.returncode == -signal.SIGKILL, "the table ended before the second cell started"
    [done_before] = [p for p in table_dir.glob("*/*/results.json") if json.loads(p.read_text())["status"] == "completed"]
    kept = done_before.read_bytes()

    again = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "1 run: 1 completed before (skipped)" in again.stderr
    assert "| Cora | GCN |" in again.stdout and "| CiteSeer | GCN |" in again.stdout
    assert done_before.read_bytes() == kept
    records = [json.loads(p.read_text()) for p in table_dir.glob("*/*/results.json")]
    assert [r["status"] for r in records] == ["completed", "completed"]
