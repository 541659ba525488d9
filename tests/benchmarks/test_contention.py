"""The contention group: its cases compose, its busy processes really take a core and are gone after, and
its contenders differ only in the thread settings."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from omegaconf import DictConfig

from benchmarks.common import Context
from benchmarks.contention import busy, cases, contenders, floor_row, gcn_step_time, python_loop_time, run_env


@pytest.mark.parametrize("case", cases(quick=False), ids=lambda c: c.name.split(":")[0])
def test_every_case_composes(case: object, compose_cfg: Callable[..., DictConfig]) -> None:
    cfg = compose_cfg(list(case.overrides))  # type: ignore[attr-defined]
    assert cfg.threads == "auto"


def test_busy_processes_spin_while_the_block_runs_and_end_with_it() -> None:
    before = set(psutil.Process().children())
    with busy(1):
        (child,) = set(psutil.Process().children()) - before
        assert child.cmdline()[-2:] == ["-c", "while True: pass"]
        deadline = time.monotonic() + 30
        while child.cpu_times().user < 0.05 and time.monotonic() < deadline:  # it computes (on a loaded machine, slowly)
            time.sleep(0.1)
        assert child.cpu_times().user >= 0.05
    assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE


def test_contenders_differ_only_in_thread_settings() -> None:
    table = contenders(2)
    assert table["graphbench"] == ({}, ())
    assert table["one thread"] == ({}, ("threads=1",))
    assert table["torch default"] == ({"OMP_WAIT_POLICY": "ACTIVE", "GOMP_SPINCOUNT": "300000"}, ("threads=2",))


def test_run_env_drops_the_callers_thread_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")
    env = run_env({"GOMP_SPINCOUNT": "5"})
    assert "OMP_NUM_THREADS" not in env and "OMP_WAIT_POLICY" not in env and env["GOMP_SPINCOUNT"] == "5"


def test_gcn_step_time_is_positive_and_restores_the_thread_count(tmp_path: Path) -> None:
    import torch

    threads = torch.get_num_threads()
    assert gcn_step_time(200, 1, steps=2) > 0
    assert torch.get_num_threads() == threads


def test_python_loop_time_grows_with_its_additions() -> None:
    assert min(python_loop_time(400_000) for _ in range(3)) > min(python_loop_time(1_000) for _ in range(3))


def test_floor_row_compares_the_loop_beside_busy_processes_with_it_alone(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls: list[int] = []
    alone = len(psutil.Process().children())

    def loop(additions: int = 0) -> float:  # 1 s alone, 2 s beside the busy processes
        beside = len(psutil.Process().children()) - alone
        calls.append(beside)
        return 2.0 if beside else 1.0

    monkeypatch.setattr("benchmarks.contention.python_loop_time", loop)
    ctx = Context(quick=True, repeats=1, data_dir=tmp_path, cache_dir=tmp_path, work_dir=tmp_path)
    row, ratio = floor_row(ctx, usable=2)
    assert ratio == 2.0 and row.figure == 2.0
    assert sorted(calls) == [0] * 5 + [1] * 5  # five interleaved rounds at least, one busy process beside
