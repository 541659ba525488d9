"""``trainer.precision=bf16-mixed`` runs end to end through the CLI (on the CPU, where bfloat16
autocast exists too) and keeps metrics and saved predictions in float32 (docs/gpu.md, "Mixed
precision"): NumPy has no bfloat16, so ``predictions.npz`` could not be written from bf16 outputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import FAST_CYCLES
from tests.e2e.test_cli import run_cli


def test_a_bf16_mixed_run_completes_with_float32_predictions_that_give_its_metric(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = run_cli([*FAST_CYCLES, "++trainer.precision=bf16-mixed", f"hydra.run.dir={run_dir}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((run_dir / "results.json").read_text())
    assert results["status"] == "completed"
    assert results["config"]["trainer"]["precision"] == "bf16-mixed"
    predictions = np.load(run_dir / "predictions.npz")
    assert predictions["y_pred"].dtype == np.float32
    assert predictions["y_pred"].shape == predictions["y_true"].shape == (32, 1)
    accuracy = ((predictions["y_pred"] > 0) == predictions["y_true"]).mean()
    assert accuracy == pytest.approx(results["metrics"]["test/accuracy"], abs=1e-6)
