"""The run record: strict JSON, atomic and exclusive writes, the history of a run that ended early."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from graphbench.run.record import INTERRUPTED, RunRecord, exit_code, is_pruned, pruned


def test_history_round_trips_with_non_finite_values_as_null(tmp_path: Path) -> None:
    record = RunRecord(
        status=INTERRUPTED,
        config={"seed": 0},
        epochs_trained=2,
        best_epoch=0,
        history=[{"epoch": 0, "val/accuracy": 0.5}, {"epoch": 1, "val/accuracy": math.nan}],
    )
    path = tmp_path / "results.json"
    record.write(path)
    data = json.loads(path.read_text())
    assert data["history"] == [{"epoch": 0, "val/accuracy": 0.5}, {"epoch": 1, "val/accuracy": None}]
    assert RunRecord.read(path).history == data["history"]


def test_a_record_without_history_reads_with_an_empty_one() -> None:
    assert RunRecord.from_dict({"status": "completed", "config": {}}).history == []


def test_exclusive_write_claims_a_free_path_once(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    RunRecord(status="running", config={"seed": 1}).write(path, exclusive=True)
    with pytest.raises(FileExistsError):
        RunRecord(status="running", config={"seed": 2}).write(path, exclusive=True)
    assert RunRecord.read(path).config == {"seed": 1}  # the first claim stands
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]  # no temporary file left


def test_plain_write_replaces(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    RunRecord(status="running", config={}).write(path, exclusive=True)
    RunRecord(status="completed", config={}).write(path)
    assert RunRecord.read(path).status == "completed"


def test_schema_3_records_round_trip_their_provenance_and_older_ones_read_without(tmp_path: Path) -> None:
    from graphbench.run.provenance import CodeVersion, Provenance

    block = Provenance(code=CodeVersion(version="0.1.0", commit="c" * 40, dirty=True, diff_sha256="d" * 64), overrides=["seed=1"])
    path = tmp_path / "results.json"
    RunRecord(status="completed", config={}, provenance=block).write(path)
    data = json.loads(path.read_text())
    assert data["schema_version"] == 3
    assert data["provenance"]["code"]["commit"] == "c" * 40 and data["provenance"]["overrides"] == ["seed=1"]
    assert RunRecord.read(path).provenance == block
    version_2 = {"status": "completed", "config": {"seed": 0}, "schema_version": 2, "num_params": 10}
    old = RunRecord.from_dict(version_2)
    assert (old.schema_version, old.provenance, old.num_params) == (2, None, 10)
    assert RunRecord.from_dict({"status": "completed", "config": {}}).schema_version == 1


def test_a_pruned_trial_has_its_own_status_and_exits_0() -> None:
    assert pruned(4) == "pruned at epoch 4" and is_pruned(pruned(4))
    assert not is_pruned("completed") and not is_pruned("diverged at epoch 4")
    assert exit_code(pruned(0)) == 0  # the search's decision, not an error
    assert exit_code("completed") == 0 and exit_code(INTERRUPTED) == 130 and exit_code("failed: x") == 1
