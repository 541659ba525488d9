"""graphbench.run.hydra_callbacks.MultirunSummary: the account printed at the end of a multirun, on fake
job directories laid out as Hydra leaves them (``<job>/.hydra/overrides.yaml`` and ``results.json``)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from graphbench.run.hydra_callbacks import JobOutcome, MultirunSummary, job_outcomes
from graphbench.run.record import COMPLETED, RESULTS_FILENAME, RunRecord

#: a fixed past time: results written "in an earlier launch" (an hour before the job started)
EARLIER_S = 1_700_000_000


def fake_job(sweep_dir: Path, num: int, overrides: list[str], status: str | None, *, completed_before: bool = False) -> Path:
    """Job ``num`` as Hydra starts it (``.hydra/overrides.yaml`` written now) with ``results.json``
    holding ``status`` (none when ``status`` is None), written after the start or, with
    ``completed_before``, an hour before it."""
    job_dir = sweep_dir / str(num)
    (job_dir / ".hydra").mkdir(parents=True)
    results = job_dir / RESULTS_FILENAME
    if status is not None:
        RunRecord(status=status, config={}, run_dir=str(job_dir)).write(results)
    OmegaConf.save(OmegaConf.create(overrides), job_dir / ".hydra" / "overrides.yaml")
    started = (job_dir / ".hydra" / "overrides.yaml").stat().st_mtime
    if status is not None:
        written = EARLIER_S if completed_before else started + 1
        os.utime(results, (written, written))
    return job_dir


def summary(sweep_dir: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int | None, str, str]:
    """``(exit code or None, stdout, stderr)`` of the callback's start and end around the fake jobs."""
    callback = MultirunSummary()
    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(sweep_dir)}}})
    callback._start = time.time() - 60  # the jobs were made before the test's call; all belong to this launch
    code = None
    try:
        callback.on_multirun_end(config)
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_relaunch_lists_the_skipped_jobs_on_the_console(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sweep = tmp_path / "sweep"
    fake_job(sweep, 0, ["model=gcn"], COMPLETED, completed_before=True)
    fake_job(sweep, 1, ["model=gine"], COMPLETED)
    fake_job(sweep, 2, ["model=gat"], COMPLETED, completed_before=True)
    code, out, err = summary(sweep, capsys)
    assert code is None
    assert out == (
        f"multirun: 3 of 3 jobs completed, 2 of them skipped as completed before (resume=auto) ({sweep})\n"
        "  skipped: 0 [model=gcn]: already completed\n"
        "  skipped: 2 [model=gat]: already completed\n"
    )
    assert err == ""


def test_fresh_sweep_with_a_failure_lists_it_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sweep = tmp_path / "sweep"
    fake_job(sweep, 0, ["model=gcn", "seed=0"], COMPLETED)
    fake_job(sweep, 1, ["model=gcn", "seed=1"], "failed: boom")
    fake_job(sweep, 2, ["model=gcn", "seed=2"], None)
    fake_job(sweep, 10, ["model=gcn", "seed=10"], "interrupted")
    code, out, err = summary(sweep, capsys)
    assert code == 1
    assert out == f"multirun: 1 of 4 jobs completed ({sweep})\n"
    assert err == (
        "  not completed: 1 [model=gcn seed=1]: failed: boom\n"
        f"  not completed: 2 [model=gcn seed=2]: failed: no readable {RESULTS_FILENAME} (FileNotFoundError)\n"
        "  not completed: 10 [model=gcn seed=10]: interrupted\n"
    )


def test_an_earlier_record_that_did_not_complete_is_not_skipped(tmp_path: Path) -> None:
    """Only a completed record is skipped by resume=auto; an old failed record means the job failed to
    start its run this time (it would have rewritten the record)."""
    sweep = tmp_path / "sweep"
    job = fake_job(sweep, 0, ["model=gcn"], "failed: boom", completed_before=True)
    assert job_outcomes(sweep) == [JobOutcome(job, "model=gcn", "failed: boom", False)]


def test_jobs_started_before_the_launch_are_left_out(tmp_path: Path) -> None:
    """A sweep directory reused with fewer jobs: job directories Hydra did not start this time are not
    this launch's jobs."""
    sweep = tmp_path / "sweep"
    fake_job(sweep, 0, ["model=gcn"], COMPLETED)
    old = fake_job(sweep, 1, ["model=gine"], COMPLETED, completed_before=True)
    os.utime(old / ".hydra" / "overrides.yaml", (EARLIER_S, EARLIER_S))
    assert [o.job_dir.name for o in job_outcomes(sweep, since=time.time() - 60)] == ["0"]


def test_pruned_trials_are_counted_apart_and_are_no_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sweep = tmp_path / "sweep"
    fake_job(sweep, 0, ["optimizer.lr=0.01"], COMPLETED)
    fake_job(sweep, 1, ["optimizer.lr=0.0001"], "pruned at epoch 2")
    fake_job(sweep, 2, ["optimizer.lr=0.001"], COMPLETED)
    code, out, err = summary(sweep, capsys)
    assert code is None and err == ""
    assert out == f"multirun: 2 of 3 jobs completed, 1 pruned by the Optuna search ({sweep})\n"
    fake_job(sweep, 3, ["optimizer.lr=1.0"], "diverged at epoch 0")
    code, out, err = summary(sweep, capsys)
    assert code == 1
    assert out == f"multirun: 2 of 4 jobs completed, 1 pruned by the Optuna search ({sweep})\n"
    assert err == "  not completed: 3 [optimizer.lr=1.0]: diverged at epoch 0\n"
