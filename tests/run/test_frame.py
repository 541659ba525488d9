"""The run frame: one run per directory, resume of the same config, the record of every ending."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from omegaconf import DictConfig, OmegaConf

from graphbench.run.frame import RunFrame, completed_run, run_frame, worker_frame
from graphbench.run.record import RunRecord
from graphbench.vocabulary.errors import ConfigError, DataError, Pruned

#: ``body(cfg, record, frame)``: a run's work, as a task does it inside its frame
RunBody = Callable[[DictConfig, RunRecord, RunFrame], None]


def recorded_run(cfg: DictConfig, body: RunBody, overrides: Sequence[str] = ()) -> RunRecord:
    """A task's frame around ``body``: the completed run that resume=auto skips, else ``body`` inside the frame."""
    if (done := completed_run(cfg)) is not None:
        return done
    with run_frame(cfg, overrides) as frame:
        body(cfg, frame.record, frame)
    return frame.record


def config(run_dir: Path, seed: int = 0, resume: str = "never") -> DictConfig:
    return OmegaConf.create({"seed": seed, "resume": resume, "paths": {"output_dir": str(run_dir)}})


def training(epochs_done: int, stop: BaseException | None = None) -> RunBody:
    def body(cfg: DictConfig, record: RunRecord, frame: RunFrame) -> None:
        record.epochs_trained = epochs_done
        record.metrics = {"val/accuracy": 0.5 + epochs_done / 10}
        if stop is not None:
            raise stop

    return body


def test_every_ending_writes_what_the_body_recorded(tmp_path: Path) -> None:
    record = recorded_run(config(tmp_path / "run"), training(3, KeyboardInterrupt()))
    on_disk = json.loads((tmp_path / "run" / "results.json").read_text())
    assert record.status == on_disk["status"] == "interrupted"
    assert on_disk["epochs_trained"] == 3 and on_disk["metrics"] == {"val/accuracy": 0.8}


def test_a_directory_holding_another_run_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    recorded_run(config(tmp_path, seed=0), training(2))
    before = (tmp_path / "results.json").read_text()
    with pytest.raises(ConfigError, match=r"already holds another run \(results\.json: completed\)"):
        recorded_run(config(tmp_path, seed=1), training(5))
    assert (tmp_path / "results.json").read_text() == before


def test_resume_auto_continues_the_same_config_and_skips_it_once_completed(tmp_path: Path) -> None:
    recorded_run(config(tmp_path, resume="never"), training(1, KeyboardInterrupt()))
    resumed = recorded_run(config(tmp_path, resume="auto"), training(4))
    assert (resumed.status, resumed.epochs_trained) == ("completed", 4)
    skipped = recorded_run(config(tmp_path, resume="auto"), training(9))
    assert skipped.epochs_trained == 4  # the completed record, not a new run
    with pytest.raises(ConfigError, match=r"another config \(seed: 0 -> 1\)"):
        recorded_run(config(tmp_path, seed=1, resume="auto"), training(9))


def test_a_claim_lost_to_another_run_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two runs checked the directory at once; the other claimed it between this one's check and claim."""
    import graphbench.run.frame as run_frame

    def checked_then_taken(output_dir: Path, resume: bool, cfg: dict | None) -> None:
        RunRecord(status="running", config={"seed": 7}).write(output_dir / "results.json")

    monkeypatch.setattr(run_frame, "existing_run", checked_then_taken)
    with pytest.raises(ConfigError, match="was just claimed by another run"):
        recorded_run(config(tmp_path), training(1))
    assert RunRecord.read(tmp_path / "results.json").config == {"seed": 7}


def test_an_unusable_run_directory_fails_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match=r"^hydra\.run\.dir=.*/file/run cannot be used: Not a directory"):
        recorded_run(config(tmp_path / "file" / "run"), training(1))


def test_every_run_records_its_provenance_with_overrides_and_utc_times(tmp_path: Path) -> None:
    from datetime import datetime, timedelta

    def body(cfg: DictConfig, record: RunRecord, frame: RunFrame) -> None:
        on_disk = json.loads((frame.output_dir / "results.json").read_text())
        assert on_disk["status"] == "running" and on_disk["provenance"]["ended_at"] is None  # recorded from the start
        raise KeyboardInterrupt

    record = recorded_run(config(tmp_path), body, overrides=["model=gcn", "seed=0"])
    provenance = json.loads((tmp_path / "results.json").read_text())["provenance"]
    assert record.status == "interrupted" and provenance == record.to_dict()["provenance"]
    assert provenance["overrides"] == ["model=gcn", "seed=0"] and provenance["raw_files"] == {}
    started, ended = datetime.fromisoformat(provenance["started_at"]), datetime.fromisoformat(provenance["ended_at"])
    assert started.utcoffset() == ended.utcoffset() == timedelta(0) and started <= ended
    assert provenance["code"]["version"] is not None and provenance["packages"]["torch"] is not None
    assert recorded_run(config(tmp_path / "other"), training(1)).provenance.overrides == []  # composed in-process: none


def test_a_multi_line_error_is_logged_once_in_full_and_recorded_by_its_first_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    message = "Raw files of Toy not found under data root /d (its one file is not there):\n  - /d/toy.txt\nPut it there."

    def body(cfg: DictConfig, record: RunRecord, frame: RunFrame) -> None:
        raise DataError(message)

    with caplog.at_level("ERROR", logger="graphbench.run.frame"):
        record = recorded_run(config(tmp_path / "run"), body)
    assert (
        record.status
        == "failed: Raw files of Toy not found under data root /d (its one file is not there): listed in full in the run's log"
    )
    assert [r.getMessage() for r in caplog.records] == [message]


def test_a_pruned_trial_is_recorded_as_pruned_with_what_it_measured(tmp_path: Path) -> None:
    record = recorded_run(config(tmp_path / "run"), training(3, Pruned(2)))
    on_disk = json.loads((tmp_path / "run" / "results.json").read_text())
    assert record.status == on_disk["status"] == "pruned at epoch 2"
    assert on_disk["epochs_trained"] == 3 and on_disk["metrics"] == {"val/accuracy": 0.8}


def test_the_frame_records_the_status_of_work_that_returns_early_and_the_exception_does_not_escape(tmp_path: Path) -> None:
    with run_frame(config(tmp_path / "a")) as frame:
        frame.record.epochs_trained = 2
    assert RunRecord.read(tmp_path / "a" / "results.json").status == "completed" and frame.record.epochs_trained == 2
    with run_frame(config(tmp_path / "b")) as frame:
        raise RuntimeError("boom")
    assert frame.record.status.startswith("failed: RuntimeError: boom (traceback in ")
    assert (tmp_path / "b" / "error.log").read_text().strip().endswith("RuntimeError: boom")


def test_another_ranks_frame_writes_nothing_and_keeps_its_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with worker_frame(tmp_path, resume=False) as frame:
        assert not frame.writer
    assert frame.record.status == "completed"
    with worker_frame(tmp_path, resume=True) as frame:
        raise RuntimeError("rank 1 failed")
    assert frame.record.status == "failed: RuntimeError: rank 1 failed" and frame.resume
    assert "RuntimeError: rank 1 failed" in capsys.readouterr().err  # for its launcher's log
    assert list(tmp_path.iterdir()) == []
