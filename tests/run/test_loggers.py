"""graphbench.run.loggers: TensorBoard, the learning rate, W&B's results artifact."""

from __future__ import annotations

import csv
import os
import struct
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from tensorboardX.proto.event_pb2 import Event

from graphbench.run.frame import finish_loggers
from graphbench.run.loggers import (
    RESULTS_ARTIFACT_TYPE,
    ResumableCSVLogger,
    RunTensorBoardLogger,
    SafeWandbLogger,
)
from graphbench.run.record import RunRecord
from graphbench.tasks.train import train
from tests.conftest import FAST_CYCLES


def _event_tags(directory: Path) -> set[str]:
    """The scalar tags of every TensorBoard event file in ``directory`` (TFRecord framing: length, CRC, event, CRC)."""
    tags: set[str] = set()
    for path in directory.glob("events.out.tfevents.*"):
        data = path.read_bytes()
        offset = 0
        while offset < len(data):
            (length,) = struct.unpack("<Q", data[offset : offset + 8])
            event = Event.FromString(data[offset + 12 : offset + 12 + length])
            tags.update(value.tag for value in event.summary.value)
            offset += 12 + length + 4
    return tags


def test_fit_and_test_in_the_same_second_write_to_one_tensorboard_file(tmp_path: Path, monkeypatch) -> None:
    # tensorboardX names an event file by the second it opens it: a clock that stands still makes a
    # writer reopened after fit (Lightning's finalize) reuse, and truncate, the name of the fit's file
    import tensorboardX.event_file_writer

    monkeypatch.setattr(tensorboardX.event_file_writer, "time", types.SimpleNamespace(time=lambda: 1_700_000_000.0))
    logger = RunTensorBoardLogger(save_dir=str(tmp_path), name="tensorboard", version="")
    logger.log_metrics({"val/accuracy": 0.5}, step=0)
    logger.finalize("success")  # the end of fit
    logger.log_metrics({"test/accuracy": 0.25}, step=1)
    logger.finalize("success")  # the end of test
    finish_loggers([logger], RunRecord(status="completed", config=None))
    assert len(list((tmp_path / "tensorboard").glob("events.out.tfevents.*"))) == 1
    assert {"val/accuracy", "test/accuracy"} <= _event_tags(tmp_path / "tensorboard")


def test_csv_and_tensorboard_get_every_epoch_with_its_learning_rate(compose_cfg, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    record = train(compose_cfg([*FAST_CYCLES, "logger=[csv,tensorboard]", "optimizer.lr=0.002"], run_dir=run_dir))
    assert record.status == "completed"
    with (run_dir / "csv" / "metrics.csv").open() as handle:
        rows = [row for row in csv.DictReader(handle) if row["lr"]]
    assert [(int(row["epoch"]), float(row["lr"])) for row in rows] == [(0, pytest.approx(0.002)), (1, pytest.approx(0.002))]
    assert [epoch["lr"] for epoch in record.history] == [0.002, 0.002]
    assert {"lr", "train/loss", "val/accuracy", "test/accuracy"} <= _event_tags(run_dir / "tensorboard")


class _Experiment:
    """Stands in for a W&B run: keeps the artifacts it is given, or fails as a broken connection would."""

    def __init__(self, fail: bool = False) -> None:
        self.id = "run123"
        self.fail = fail
        self.artifacts: list[Any] = []

    def log_artifact(self, artifact: Any) -> None:
        if self.fail:
            raise ConnectionError("W&B is unreachable")
        self.artifacts.append(artifact)


def test_upload_run_files_logs_results_and_predictions_as_one_artifact(tmp_path: Path) -> None:
    for name in ("results.json", "predictions.npz", "predictions_val.npz", "other.txt"):
        (tmp_path / name).write_text("x")
    logger = SafeWandbLogger(save_dir=str(tmp_path), offline=True, upload_results=True)
    logger._experiment = _Experiment()
    logger.upload_run_files(tmp_path)
    (artifact,) = logger._experiment.artifacts
    assert artifact.type == RESULTS_ARTIFACT_TYPE and artifact.name == "results-run123"
    assert sorted(artifact.manifest.entries) == ["predictions.npz", "predictions_val.npz", "results.json"]


def test_a_failed_upload_switches_wandb_off_and_raises_nothing(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text("{}")
    logger = SafeWandbLogger(save_dir=str(tmp_path), offline=True, upload_results=True)
    logger._experiment = _Experiment(fail=True)
    logger.upload_run_files(tmp_path)
    assert isinstance(logger.failed, ConnectionError)


def test_an_offline_wandb_run_logs_the_results_artifact_and_the_learning_rate(
    compose_cfg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DATA_DIR", str(tmp_path / "wandb-data"))  # the artifact's staged files
    run_dir = tmp_path / "run"
    overrides = [*FAST_CYCLES, "trainer.max_epochs=1", "logger=[csv,wandb]", "logger.wandb.offline=true"]
    record = train(compose_cfg([*overrides, "logger.wandb.upload_results=true"], run_dir=run_dir))
    assert record.status == "completed"
    import wandb

    wandb.teardown()  # W&B's documented wait for the run's files to be written
    (run_file,) = (run_dir / "wandb").glob("offline-run-*/*.wandb")
    content = run_file.read_bytes()
    for expected in (b"results-", RESULTS_ARTIFACT_TYPE.encode(), b"results.json", b"predictions.npz", b'"lr"'):
        assert expected in content, expected


#: an offline W&B run in a fresh process (W&B warns once per process), its init arguments printed
OFFLINE_RUN = """
import sys
from graphbench.run.loggers import SafeWandbLogger
logger = SafeWandbLogger(save_dir=sys.argv[1], offline=True)
print(sorted(logger._wandb_init))
logger.experiment
logger.finish()
"""


def test_an_offline_wandb_run_prints_no_deprecation_warning(tmp_path: Path) -> None:
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "false", "WANDB_DATA_DIR": str(tmp_path / "wandb-data")}
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE_RUN, str(tmp_path)], env=env, capture_output=True, text=True, timeout=300, check=True
    )
    assert "offline" in done.stderr  # W&B spoke: "W&B syncing is set to `offline`"
    assert "anonymous" not in done.stdout + done.stderr


def csv_logger(tmp_path: Path) -> ResumableCSVLogger:
    return ResumableCSVLogger(save_dir=str(tmp_path), name="csv", version="", flush_logs_every_n_steps=1)


def test_csv_logger_rewrites_the_whole_file_with_every_column_at_each_save(tmp_path: Path) -> None:
    logger = csv_logger(tmp_path)
    logger.log_hyperparams({"seed": 3})
    logger.log_metrics({"val/loss": 0.5, "epoch": 0}, step=2)
    assert (tmp_path / "csv" / "metrics.csv").read_text() == "epoch,step,val/loss\n0,2,0.5\n"
    logger.log_metrics({"train/loss": 0.75, "epoch": 0}, step=2)  # a new column: the header grows, rows stay
    assert (tmp_path / "csv" / "metrics.csv").read_text() == "epoch,step,train/loss,val/loss\n0,2,,0.5\n0,2,0.75,\n"
    assert (tmp_path / "csv" / "hparams.yaml").read_text() == "seed: 3\n"
    assert sorted(p.name for p in (tmp_path / "csv").iterdir()) == ["hparams.yaml", "metrics.csv"]  # no temporary left


@pytest.mark.parametrize("killed_while_resuming", [False, True])
def test_a_resumed_csv_logger_keeps_the_rows_of_the_resumed_epochs(tmp_path: Path, killed_while_resuming: bool) -> None:
    """``killed_while_resuming``: an earlier resume was killed after moving metrics.csv aside, before writing it back."""
    folder = tmp_path / "csv"
    folder.mkdir()
    rows = "epoch,step,train/loss\n0,2,0.75\n1,5,0.5\n2,8,0.25\n"
    (folder / ("metrics.csv.resuming" if killed_while_resuming else "metrics.csv")).write_text(rows)
    logger = csv_logger(tmp_path)
    logger.resume_after(1)
    logger.log_metrics({"train/loss": 0.125, "epoch": 2}, step=8)
    assert (folder / "metrics.csv").read_text() == "epoch,step,train/loss\n0,2,0.75\n1,5,0.5\n2,8,0.125\n"
    assert sorted(p.name for p in folder.iterdir()) == ["metrics.csv"]
