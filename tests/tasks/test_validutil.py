"""task=validutil in process on a tiny Cora fixture: every validation node tuned on, the final model grid-searched,
and one-line failures for bad phase settings and node counts."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from graphbench.tasks.validutil import VALIDUTIL_CSV, validutil
from tests.tasks.test_igb import cora_cfg

TINY_PHASE = {"trainer": {"max_epochs": 2}}


def test_validutil_tunes_every_validation_node_and_grid_searches_the_final_model(tmp_path: Path) -> None:
    grid = {"optimizer": {"lr": [0.05, 0.1]}}
    record = validutil(cora_cfg(tmp_path), num_val_nodes=2, baseline=TINY_PHASE, tuning=TINY_PHASE, grid=grid)
    assert record.status == "completed"
    m = record.metrics
    assert m["validutil/inflation"] == pytest.approx(m["test/accuracy"] - m["validutil/baseline_test_accuracy"])
    assert 0.0 <= m["validutil/pseudo_label_accuracy"] <= 1.0
    assert m["grid/num_points"] == 2 and m["grid/optimizer.lr"] in (0.05, 0.1)
    with (tmp_path / "out" / VALIDUTIL_CSV).open() as handle:
        rows = list(csv.DictReader(handle))
    assert m["validutil/num_val_nodes"] == 2 == len(rows) and all(0 <= int(r["tuned"]) < 3 for r in rows)


def test_validutil_phase_settings_are_single_values(tmp_path: Path) -> None:
    record = validutil(cora_cfg(tmp_path), baseline={"optimizer": {"lr": [0.01, 0.02]}})
    assert record.status.startswith("failed: task.baseline.optimizer.lr=[0.01, 0.02]: a phase takes one value")


def test_validutil_with_too_many_nodes_fails_with_a_truthful_status(tmp_path: Path) -> None:
    record = validutil(cora_cfg(tmp_path), num_val_nodes=10_000, baseline=TINY_PHASE)
    assert record.status.startswith("failed: task.num_val_nodes=10000 must lie in 1..")
