"""``graphbench.tasks.train.train`` on composed configs: reproducibility and W&B offline."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from graphbench.run.cli import format_summary
from graphbench.tasks.train import train
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
    # and the provenance block as config under dotted keys (graphbench.run.frame.finish_loggers)
    for expected in (
        b"generation_seed",
        b"run_group",
        b"val/accuracy",
        b"train/loss",
        b"provenance.code.commit",
        b"provenance.packages.torch",
    ):
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


def test_ntk_alignment_reaches_results_json_and_the_console_summary(compose_cfg, tmp_path: Path) -> None:
    """``callbacks=ntk``: the last measured alignments are metrics of the record (``ntk/*_final``), equal to
    the last row of ``ntk_alignment.csv``, and the summary ``run.py`` prints shows them."""
    run_dir = tmp_path / "run"
    record = train(compose_cfg([*FAST_CYCLES, "logger=none", "callbacks=ntk", "callbacks.ntk.num_graphs=8"], run_dir=run_dir))
    assert record.status == "completed"
    with (run_dir / "ntk_alignment.csv").open() as handle:
        last = list(csv.DictReader(handle))[-1]
    assert int(last["epoch"]) == 2
    keys = ["ntk/kernel_target_alignment", "ntk/kernel_target_alignment_centered"]  # cycles is graph-level
    written = json.loads((run_dir / "results.json").read_text())["metrics"]
    assert {k for k in written if k.startswith("ntk/")} == {f"{k}_final" for k in keys}
    for key in keys:
        assert written[f"{key}_final"] == pytest.approx(float(last[key]), rel=1e-12)
    summary = format_summary(record)
    expected = ", ".join(f"{k} = {record.metrics[k]:.4f}" for k in sorted(f"{k}_final" for k in keys))
    assert f"\nmetrics: {expected}\n" in summary


def test_a_run_reports_its_own_peak_memory_not_an_earlier_runs(compose_cfg, tmp_path: Path) -> None:
    """An in-process multirun: what an earlier job left (a 256 MiB buffer in a reference cycle, as its
    Trainer and data are) is freed before this run, and this run's peak leaves out the earlier peak."""
    import gc
    import weakref

    from graphbench.callbacks.resources import peak_rss_mb

    class Holder:
        def __init__(self) -> None:
            self.ballast = bytearray(b"\x01" * (256 * 2**20))
            self.me = self

    gc.disable()  # the collector must not free the cycle before the run does (it is re-enabled below)
    try:
        holder = Holder()
        alive = weakref.ref(holder)
        del holder
        earlier_peak = peak_rss_mb()
        record = train(compose_cfg([*FAST_CYCLES, "trainer.max_epochs=1", "logger=none"], run_dir=tmp_path / "run"))
    finally:
        gc.enable()
    assert record.status == "completed"
    assert alive() is None
    assert record.peak_memory_mb is not None and record.peak_memory_mb < earlier_peak - 200
