"""The real CLI, run as a user runs it, on fast settings."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import FAST_CYCLES
from tests.paths import REPO


def run_cli(args: list[str], tmp_path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "WANDB_MODE": "offline", "HYDRA_FULL_ERROR": "0", **(env or {})}
    full_env.pop("GRAPHBENCH_DATA", None)
    flags = [a for a in args if a.startswith("-") and not a.startswith("++")]
    overrides = [a for a in args if a not in flags]
    return subprocess.run(
        [sys.executable, "run.py", *flags, f"paths.cache_dir={tmp_path / 'cache'}", *overrides],
        cwd=REPO, env=full_env, capture_output=True, text=True, timeout=600,
    )


def test_default_experiment_runs_and_writes_results(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = run_cli([*FAST_CYCLES, f"hydra.run.dir={run_dir}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "test: test/accuracy" in proc.stdout
    results = json.loads((run_dir / "results.json").read_text())
    assert results["status"] == "completed"
    assert set(results) >= {"config", "num_params", "best_epoch", "metrics", "time_per_epoch_s", "peak_memory_mb", "status"}
    assert {"train/accuracy", "val/accuracy", "test/accuracy", "test/loss"} <= set(results["metrics"])
    assert results["config"]["dataset"]["name"] == "cycles"
    predictions = np.load(run_dir / "predictions.npz")
    # row-aligned with the dataset's test indices (the cycles test split is the last 32 graphs)
    assert predictions["index"].tolist() == list(range(128, 160))
    assert predictions["y_pred"].shape == predictions["y_true"].shape == (32, 1)
    accuracy = ((predictions["y_pred"] > 0) == predictions["y_true"]).mean()
    assert accuracy == pytest.approx(results["metrics"]["test/accuracy"], abs=1e-6)
    assert (run_dir / "csv" / "metrics.csv").exists()


def test_multirun_writes_one_results_json_per_job(tmp_path: Path) -> None:
    sweep_dir = tmp_path / "sweep"
    proc = run_cli(["-m", *FAST_CYCLES, "trainer.max_epochs=1", "model=gcn,mlp", f"hydra.sweep.dir={sweep_dir}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for job in ("0", "1"):
        assert json.loads((sweep_dir / job / "results.json").read_text())["status"] == "completed"


def test_help_lists_groups_and_options(tmp_path: Path) -> None:
    proc = run_cli(["--help"], tmp_path)
    assert proc.returncode == 0
    for expected in ("dataset:", "cycles", "peptides-func", "model:", "gatedgcn", "head: linear, mlp2, mlp3", "budget: 100k, 500k, none"):
        assert expected in proc.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["model=transformer9000"], "Could not find 'model/transformer9000'"),
        (["seed=abc"], "seed='abc' must be an integer"),
        (["trainer.max_epochs=ten"], "trainer.max_epochs='ten' must be an integer"),
    ],
)
def test_bad_input_gives_one_clear_message(tmp_path: Path, args: list[str], expected: str) -> None:
    proc = run_cli([*FAST_CYCLES, *args, f"hydra.run.dir={tmp_path / 'run'}"], tmp_path)
    assert proc.returncode == 1
    assert expected in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_data_root_names_files_and_writes_no_cache(tmp_path: Path) -> None:
    proc = run_cli(
        ["dataset=peptides-func", f"paths.data_dir={tmp_path / 'nowhere'}", "dataset.download=false", f"hydra.run.dir={tmp_path / 'run'}"],
        tmp_path,
    )
    assert proc.returncode == 1
    assert "peptide_multi_class_dataset.csv.gz" in proc.stderr and "splits_random_stratified_peptide.pickle" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not list((tmp_path / "cache").glob("*.pt")) if (tmp_path / "cache").exists() else True


def test_corrupted_raw_file_is_rejected_without_cache(tmp_path: Path) -> None:
    root = tmp_path / "data"
    (root / "peptides-functional" / "raw").mkdir(parents=True)
    (root / "peptides-functional" / "raw" / "peptide_multi_class_dataset.csv.gz").write_bytes(b"not the official file")
    (root / "peptides-functional" / "splits_random_stratified_peptide.pickle").write_bytes(b"nor this")
    proc = run_cli(["dataset=peptides-func", f"paths.data_dir={root}", "dataset.download=false", f"hydra.run.dir={tmp_path / 'run'}"], tmp_path)
    assert proc.returncode == 1
    assert "corrupted or not the official file" in proc.stderr and "MD5" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").glob("*.pt"))
