"""A run killed with SIGKILL and relaunched with ``resume=auto`` logs exactly what the uninterrupted run
logs, epoch by epoch (losses, metrics, learning rate, step), and ends with the same record: under the
plateau scheduler killed the epoch before its first reduction, under the cosine schedule killed inside
its warm-up, and with early stopping killed before the stop."""

from __future__ import annotations

import csv
import json
import signal
from pathlib import Path

import pytest
import torch

from tests.conftest import FAST_CYCLES
from tests.e2e.test_cli import run_cli
from tests.e2e.test_resume import start, stop_after_epoch

EPOCHS = 12
BASE = [*FAST_CYCLES, "dataset.batch_size=16", f"trainer.max_epochs={EPOCHS}", "checkpoint_every_s=0", "seed=3"]

#: name -> (overrides, how to choose the epochs to kill at from the uninterrupted run's CSV rows)
SCHEDULES = {
    "plateau": ["scheduler=plateau", "scheduler.patience=1", "optimizer.lr=0.01"],
    "cosine": ["scheduler=cosine", "scheduler.warmup_epochs=5"],
    "early_stopping": ["callbacks=early_stopping", "callbacks.early_stopping.patience=2", "optimizer.lr=0.01"],
}


def csv_rows(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "csv" / "metrics.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def epoch_lrs(rows: list[dict[str, str]]) -> dict[int, float]:
    return {int(row["epoch"]): float(row["lr"]) for row in rows if row.get("lr")}


def killed_at(args: list[str], run_dir: Path, tmp_path: Path, epoch: int) -> int:
    """Start the run, SIGKILL it once the line of ``epoch`` is printed; the number of epochs its
    ``last.ckpt`` holds as done."""
    stop_after_epoch(start(tmp_path, run_dir, args), epoch, signal.SIGKILL)
    assert json.loads((run_dir / "results.json").read_text())["status"] == "running"
    return int(torch.load(run_dir / "checkpoints" / "last.ckpt", map_location="cpu", weights_only=False)["epoch"])


def same_record(resumed: dict, reference: dict) -> None:
    for key in ("status", "metrics", "best_epoch", "tested_epoch", "epochs_trained", "num_params"):
        assert resumed[key] == reference[key], key
    assert resumed["history"] == reference["history"]


@pytest.mark.slow
@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
def test_killed_run_resumes_to_every_logged_value_of_the_uninterrupted_run(tmp_path: Path, schedule: str) -> None:
    args = [*BASE, *SCHEDULES[schedule]]
    reference_dir = tmp_path / "uninterrupted"
    proc = run_cli([*args, f"hydra.run.dir={reference_dir}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    reference_rows = csv_rows(reference_dir)
    reference = json.loads((reference_dir / "results.json").read_text())
    lrs = epoch_lrs(reference_rows)

    if schedule == "plateau":
        reduced = [e for e in sorted(lrs) if e > 0 and lrs[e] < lrs[e - 1]]
        assert reduced, f"the plateau scheduler never reduced the rate in {EPOCHS} epochs: {lrs}"
        kill_epochs = [reduced[0] - 1]  # the last epoch at the old rate: its end steps the scheduler
    elif schedule == "cosine":
        assert lrs[0] < lrs[1] < lrs[2] < lrs[5], lrs  # warming up
        kill_epochs = [2]
    else:
        assert 3 <= reference["epochs_trained"] < EPOCHS, "early stopping did not stop the run mid-way"
        kill_epochs = [reference["epochs_trained"] - 2]  # its last checkpoint before the stop

    for epoch in kill_epochs:
        run_dir = tmp_path / f"killed-{epoch}"
        done = killed_at(args, run_dir, tmp_path, epoch)
        proc = run_cli([*args, "resume=auto", f"hydra.run.dir={run_dir}"], tmp_path)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert csv_rows(run_dir) == reference_rows
        same_record(json.loads((run_dir / "results.json").read_text()), reference)
        # the file held the epochs up to the printed one, or one more if the run got that far
        assert done in (epoch, epoch + 1)
        assert f"(epoch {done - 1} done)" in proc.stdout + proc.stderr
