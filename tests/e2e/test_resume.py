"""Resuming through the real CLI: a killed run relaunched with ``resume=auto`` ends with exactly the
numbers of an uninterrupted run; a completed run is skipped; SIGTERM leaves a resumable state. Runs
killed at one of their writes are scripts/killed_run.py's (the kill campaign's instrumented run)."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.conftest import FAST_CYCLES
from tests.e2e.test_cli import cli_env, run_cli
from tests.paths import REPO
from tests.warm_python import run_python

#: 12 epochs of 12 small batches: long enough to be killed mid-run (after epoch 3), a few seconds in all
EPOCHS = 12
RESUMABLE = [*FAST_CYCLES, "dataset.batch_size=8", f"trainer.max_epochs={EPOCHS}", "resume=auto", "checkpoint_every_s=0"]


def start(tmp_path: Path, run_dir: Path, args: list[str] = RESUMABLE) -> subprocess.Popen[str]:
    """The CLI run of ``args`` in ``run_dir``, started in the background, its output piped."""
    args = [*args, f"hydra.run.dir={run_dir}", f"paths.cache_dir={tmp_path / 'cache'}"]
    return subprocess.Popen(
        [sys.executable, "run.py", *args], cwd=REPO, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def stop_after_epoch(proc: subprocess.Popen[str], epoch: int, signum: int) -> None:
    """Send ``signum`` once the line of ``epoch`` is printed (with ``checkpoint_every_s=0`` the state
    before that epoch is on disk by then)."""
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith(f"epoch {epoch}/"):
            break
    proc.send_signal(signum)
    proc.communicate(timeout=300)


def killed_at(event: str, args: list[str], tmp_path: Path, signum: str = "SIGKILL") -> subprocess.CompletedProcess[str]:
    """``python run.py <args>`` (cache in ``tmp_path``) that sends itself ``signum`` at the write ``event``
    (``results.json#1:after``: the claim of its directory written; see scripts/killed_run.py)."""
    flags = [a for a in args if a.startswith("-")]
    overrides = [a for a in args if a not in flags]
    command = [
        "scripts/killed_run.py",
        "--kill",
        event,
        "--signal",
        signum,
        "--",
        *flags,
        f"paths.cache_dir={tmp_path / 'cache'}",
        *overrides,
    ]
    return run_python(command, REPO, cli_env())


def epochs_in_csv(run_dir: Path) -> list[int]:
    with open(run_dir / "csv" / "metrics.csv", newline="") as handle:
        return sorted(int(float(row["epoch"])) for row in csv.DictReader(handle) if row.get("train/loss"))


@pytest.mark.slow
def test_killed_run_resumes_to_the_numbers_of_an_uninterrupted_run(tmp_path: Path) -> None:
    reference_dir, resumed_dir = tmp_path / "uninterrupted", tmp_path / "killed"
    proc = run_cli([*RESUMABLE, f"hydra.run.dir={reference_dir}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    reference = json.loads((reference_dir / "results.json").read_text())

    stop_after_epoch(start(tmp_path, resumed_dir), epoch=3, signum=signal.SIGKILL)
    killed = json.loads((resumed_dir / "results.json").read_text())
    assert killed["status"] == "running"  # SIGKILL leaves no chance to write anything else
    assert (resumed_dir / "checkpoints" / "last.ckpt").is_file()

    proc = run_cli([*RESUMABLE, f"hydra.run.dir={resumed_dir}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "resuming from" in proc.stdout
    resumed = json.loads((resumed_dir / "results.json").read_text())
    assert resumed["status"] == "completed"
    assert resumed["metrics"] == reference["metrics"]
    assert (
        (resumed["best_epoch"], resumed["epochs_trained"])
        == (reference["best_epoch"], reference["epochs_trained"])
        == (
            reference["best_epoch"],
            EPOCHS,
        )
    )
    assert epochs_in_csv(resumed_dir) == list(range(EPOCHS))  # appended, each epoch once

    again = run_cli([*RESUMABLE, f"hydra.run.dir={resumed_dir}"], tmp_path)
    assert again.returncode == 0
    assert "already holds a completed run" in again.stdout
    assert json.loads((resumed_dir / "results.json").read_text()) == resumed


def test_sigterm_leaves_preempted_status_and_last_checkpoint(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    stop_after_epoch(start(tmp_path, run_dir), epoch=1, signum=signal.SIGTERM)
    assert json.loads((run_dir / "results.json").read_text())["status"] == "preempted"
    assert (run_dir / "checkpoints" / "last.ckpt").is_file()


def test_ctrl_c_saves_the_last_epoch_boundary_and_the_same_command_continues_from_it(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = [a for a in RESUMABLE if a != "checkpoint_every_s=0"]  # the default interval: no file yet at epoch 2
    proc = start(tmp_path, run_dir, args)
    stop_after_epoch(proc, epoch=2, signum=signal.SIGINT)
    assert json.loads((run_dir / "results.json").read_text())["status"] == "interrupted"
    done = int(torch.load(run_dir / "checkpoints" / "last.ckpt", map_location="cpu", weights_only=False)["epoch"])
    assert 1 <= done <= 3

    again = run_cli([*args, f"hydra.run.dir={run_dir}"], tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"resuming from {run_dir / 'checkpoints' / 'last.ckpt'} (epoch {done - 1} done)" in again.stdout + again.stderr
    assert epochs_in_csv(run_dir) == list(range(EPOCHS))  # the rows before the boundary kept, each epoch once


def test_a_resume_without_a_checkpoint_says_so_and_keeps_the_earlier_log(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    first = run_cli([*RESUMABLE, "trainer.max_epochs=2", "~callbacks.last_checkpoint", f"hydra.run.dir={run_dir}"], tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    (run_dir / "results.json").unlink()  # as if it had been killed before its end
    earlier = (run_dir / "csv" / "metrics.csv").read_text()

    again = run_cli([*RESUMABLE, "trainer.max_epochs=2", f"hydra.run.dir={run_dir}"], tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    kept = run_dir / "csv" / "metrics.1.csv"
    assert (
        f"resume=auto starts from epoch 0 ({run_dir / 'checkpoints' / 'last.ckpt'} was never written); the earlier log is kept as {kept}"
        in again.stdout + again.stderr
    )
    assert kept.read_text() == earlier
    assert epochs_in_csv(run_dir) == [0, 1]


def test_a_run_killed_while_testing_resumes_with_its_epochs_and_history(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = [*RESUMABLE, "trainer.max_epochs=3", f"hydra.run.dir={run_dir}"]
    killed = killed_at("predictions.npz#1:before", args, tmp_path)  # fit done, last.ckpt holds every epoch
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert json.loads((run_dir / "results.json").read_text())["status"] == "running"
    assert int(torch.load(run_dir / "checkpoints" / "last.ckpt", map_location="cpu", weights_only=False)["epoch"]) == 3

    again = run_cli(args, tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "(epoch 2 done)" in again.stdout + again.stderr
    record = json.loads((run_dir / "results.json").read_text())
    assert record["status"] == "completed" and record["epochs_trained"] == 3
    assert [entry["epoch"] for entry in record["history"]] == [0, 1, 2]
    assert f"best epoch: {record['best_epoch']} of 3" in again.stdout
    assert epochs_in_csv(run_dir) == [0, 1, 2]


def test_a_run_killed_right_after_claiming_its_directory_is_continued_by_resume_auto(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = [*RESUMABLE, "trainer.max_epochs=2", f"hydra.run.dir={run_dir}"]
    killed = killed_at("results.json#1:after", args, tmp_path)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert sorted(p.name for p in run_dir.iterdir() if not p.name.startswith(".")) == ["results.json", "run.log"]
    assert json.loads((run_dir / "results.json").read_text())["status"] == "running"

    again = run_cli(args, tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    record = json.loads((run_dir / "results.json").read_text())
    assert record["status"] == "completed" and record["epochs_trained"] == 2
    assert epochs_in_csv(run_dir) == [0, 1]


def test_a_multirun_killed_in_its_third_job_finishes_the_missing_jobs_and_reruns_none(tmp_path: Path) -> None:
    sweep_dir = tmp_path / "sweep"
    args = ["-m", *RESUMABLE, "trainer.max_epochs=2", "seed=0,1,2,3", f"hydra.sweep.dir={sweep_dir}"]
    # each job writes last.ckpt at the start of its second epoch and at its end: the fifth is the third job's first
    killed = killed_at("last.ckpt#5:after", args, tmp_path)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    statuses = [json.loads((sweep_dir / str(job) / "results.json").read_text())["status"] for job in range(3)]
    assert statuses == ["completed", "completed", "running"] and not (sweep_dir / "3").exists()
    logs = {job: (sweep_dir / str(job) / "run.log").read_bytes() for job in (0, 1)}
    times = {job: (sweep_dir / str(job) / "run.log").stat().st_mtime_ns for job in (0, 1)}

    again = run_cli(args, tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    records = [json.loads((sweep_dir / str(job) / "results.json").read_text()) for job in range(4)]
    assert [r["status"] for r in records] == ["completed"] * 4 and [r["epochs_trained"] for r in records] == [2] * 4
    assert "multirun: 4 of 4 jobs completed, 2 of them skipped as completed before (resume=auto)" in again.stdout
    for job in (0, 1):  # not rerun: their log untouched
        assert (sweep_dir / str(job) / "run.log").read_bytes() == logs[job]
        assert (sweep_dir / str(job) / "run.log").stat().st_mtime_ns == times[job]
    assert "resuming from" in (sweep_dir / "2" / "run.log").read_text()
