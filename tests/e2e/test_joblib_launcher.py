"""Several jobs of a multirun at once on one machine: ``hydra/launcher=joblib`` (hydra-joblib-launcher,
the plugin's own config) with ``hydra.launcher.n_jobs`` worker processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import FAST_CYCLES
from tests.e2e.test_cli import run_cli


@pytest.mark.slow
def test_joblib_runs_four_jobs_two_at_a_time(tmp_path: Path) -> None:
    sweep_dir = tmp_path / "sweep"
    args = ["-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "dataset=cycles", "model=gcn", "seed=0,1,2,3"]
    proc = run_cli([*args, *FAST_CYCLES, "trainer.max_epochs=1", f"hydra.sweep.dir={sweep_dir}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"multirun: 4 of 4 jobs completed ({sweep_dir})" in proc.stdout
    for job in range(4):
        record = json.loads((sweep_dir / str(job) / "results.json").read_text())
        assert record["status"] == "completed"
        assert record["config"]["seed"] == job
        assert record["config"]["resume"] == "never"  # nothing requeues a joblib job: no resume by default
        assert record["metrics"]["test/accuracy"] is not None
