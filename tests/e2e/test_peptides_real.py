"""A Peptides-func multirun on the real files, and AP parity on its predictions."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import real_data_root
from tests.metrics.test_taskwise import ogb_ap
from tests.paths import REPO
from tests.warm_python import run_python

pytestmark = pytest.mark.real_data


@pytest.mark.slow
def test_multirun_three_models_two_heads(tmp_path: Path, shared_cache_dir: Path) -> None:
    root = real_data_root()
    sweep = tmp_path / "sweep"
    cmd = [
        "run.py",
        "-m",
        "dataset=peptides-func",
        "model=gcn,gine,gatedgcn",
        "head=linear,mlp2",
        f"paths.data_dir={root}",
        "trainer.max_epochs=1",
        "++trainer.limit_train_batches=5",
        "++trainer.limit_val_batches=2",
        "++trainer.limit_test_batches=2",
        "trainer.enable_progress_bar=false",
        f"paths.cache_dir={shared_cache_dir}",
        f"hydra.sweep.dir={sweep}",
    ]
    proc = run_python(cmd, REPO, {**os.environ, "HYDRA_FULL_ERROR": "0"}, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = set()
    for job in range(6):
        results = json.loads((sweep / str(job) / "results.json").read_text())
        assert results["status"] == "completed"
        assert {"config", "num_params", "best_epoch", "metrics", "time_per_epoch_s", "peak_memory_mb"} <= set(results)
        assert {"train/ap", "val/ap", "test/ap", "test/loss"} <= set(results["metrics"])
        seen.add((results["config"]["model"]["name"], results["config"]["head"]["name"]))
        predictions = np.load(sweep / str(job) / "predictions.npz")
        # two test batches of the model's LRGB-tuned recipe, which dataset=peptides-func model=<model> trains
        tested = 2 * results["config"]["dataset"]["batch_size"]
        assert predictions["y_pred"].shape == predictions["y_true"].shape == (tested, 10)
        # the official test indices, in order (limit_test_batches=2 -> the first two batches of the split)
        assert np.all(np.diff(predictions["index"]) > 0)
        assert ogb_ap(predictions["y_true"], predictions["y_pred"]) == pytest.approx(results["metrics"]["test/ap"], abs=1e-6)
    assert seen == {(m, h) for m in ("gcn", "gine", "gatedgcn") for h in ("linear", "mlp2")}


def test_fast_dev_run_on_peptides_func(tmp_path: Path, shared_cache_dir: Path) -> None:
    """Lightning's smoke-test flag: one batch of each split, and a results.json that says completed."""
    run_dir = tmp_path / "run"
    cmd = [
        "run.py",
        "dataset=peptides-func",
        "model=gcn",
        f"paths.data_dir={real_data_root()}",
        "++trainer.fast_dev_run=true",
        f"paths.cache_dir={shared_cache_dir}",
        f"hydra.run.dir={run_dir}",
    ]
    proc = run_python(cmd, REPO, {**os.environ, "HYDRA_FULL_ERROR": "0"}, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((run_dir / "results.json").read_text())
    assert results["status"] == "completed" and results["epochs_trained"] == 1
    # one test batch of the LRGB-tuned GCN recipe, which dataset=peptides-func model=gcn trains (batch size 200)
    assert np.load(run_dir / "predictions.npz")["y_pred"].shape == (200, 10)
