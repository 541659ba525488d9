"""``graphbench.train.train`` on composed configs: reproducibility and W&B offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphbench.train import train
from tests.conftest import FAST_CYCLES


def test_same_seed_gives_identical_metrics(compose_cfg, tmp_path: Path) -> None:
    first = train(compose_cfg([*FAST_CYCLES, "seed=7", "logger=none"], run_dir=tmp_path / "a"))
    second = train(compose_cfg([*FAST_CYCLES, "seed=7", "logger=none"], run_dir=tmp_path / "b"))
    other = train(compose_cfg([*FAST_CYCLES, "seed=8", "logger=none"], run_dir=tmp_path / "c"))
    assert first.metrics == second.metrics
    assert first.best_epoch == second.best_epoch
    assert first.metrics["train/loss"] != other.metrics["train/loss"]


def test_wandb_offline_run_writes_its_files_and_finishes(compose_cfg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WANDB_MODE", "offline")
    run_dir = tmp_path / "run"
    import wandb

    results = train(compose_cfg([*FAST_CYCLES, "logger=wandb", "logger.wandb.offline=true"], run_dir=run_dir))
    assert results.status == "completed"
    assert wandb.run is None  # finished, so the next Hydra job starts its own run
    # `finish` hands the run to W&B's service process, which writes the record file on its own time;
    # `teardown` is W&B's documented wait for all data to be written (it runs at exit otherwise)
    wandb.teardown()
    runs = list((run_dir / "wandb").glob("offline-run-*"))
    assert len(runs) == 1
    records = list(runs[0].glob("*.wandb"))
    assert len(records) == 1
    content = records[0].read_bytes()
    # the full resolved config and the epoch metrics went into the run's record file
    for expected in (b"generation_seed", b"run_group", b"val/accuracy", b"train/loss"):
        assert expected in content, expected


def test_wandb_failure_never_kills_training(compose_cfg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Online mode without an API key or network: W&B fails, the error is logged, training completes."""
    monkeypatch.setenv("WANDB_MODE", "online")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.setenv("WANDB_CONFIG_DIR", str(tmp_path / "wandb-config"))
    monkeypatch.setenv("WANDB_BASE_URL", "http://127.0.0.1:9")  # nothing listens: fails fast, offline
    monkeypatch.setenv("WANDB_INIT_TIMEOUT", "5")
    results = train(compose_cfg([*FAST_CYCLES, "trainer.max_epochs=1", "logger=wandb"], run_dir=tmp_path / "run"))
    assert results.status == "completed"
    assert json.loads((tmp_path / "run" / "results.json").read_text())["status"] == "completed"


def test_batches_gathered_on_the_device_train_exactly_as_cpu_batches(compose_cfg, tmp_path: Path) -> None:
    """``dataset.batch_on_device=true`` changes where a batch is gathered, not what it holds: the
    same run (with the NTK callback, which draws its own batch through the DataModule) ends with
    the same metrics, NTK alignments and best epoch."""
    runs = {}
    for flag in ("false", "true"):
        overrides = [*FAST_CYCLES, "seed=3", "logger=none", "callbacks=ntk", f"dataset.batch_on_device={flag}"]
        runs[flag] = train(compose_cfg(overrides, run_dir=tmp_path / flag))
    assert runs["true"].status == runs["false"].status == "completed"
    assert runs["true"].metrics == runs["false"].metrics
    assert runs["true"].best_epoch == runs["false"].best_epoch
    alignments = [(tmp_path / flag / "ntk_alignment.csv").read_text() for flag in ("false", "true")]
    assert alignments[0].count("\n") == 4 and alignments[1] == alignments[0]  # a header and three measurements
