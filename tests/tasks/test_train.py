"""``task.checkpoint`` of :func:`graphbench.tasks.train.train`: the weights a run is tested with, those of the
best validation epoch (the default) or of the last epoch (the NCMemo study's protocol); and the callbacks it
gets from ``conf/callbacks/`` (removed, or added by a preset), with a truthful record either way."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from omegaconf import DictConfig

from graphbench.callbacks.record_progress import epoch_metrics
from graphbench.main import run_task
from graphbench.run.record import RunRecord
from graphbench.tasks.train import train
from graphbench.vocabulary.errors import ConfigError
from tests.conftest import FAST_CYCLES
from tests.e2e.test_cli import run_cli

#: four epochs whose best validation accuracy is not the last epoch's (deterministic for this seed)
RUN = [*FAST_CYCLES, "trainer.max_epochs=4", "optimizer.lr=0.05", "seed=1", "logger=none"]


def run(compose_cfg: Callable[..., DictConfig], run_dir: Path, checkpoint: str) -> RunRecord:
    record = run_task(compose_cfg([*RUN, f"task.checkpoint={checkpoint}"], run_dir=run_dir))  # as run.py runs it
    assert record.status == "completed"
    return record


def test_last_tests_the_last_epoch_and_records_which(compose_cfg: Callable[..., DictConfig], tmp_path: Path) -> None:
    best = run(compose_cfg, tmp_path / "best", "best")
    last = run(compose_cfg, tmp_path / "last", "last")
    assert [e["val/accuracy"] for e in best.history] == [e["val/accuracy"] for e in last.history]  # the same training
    assert best.best_epoch == last.best_epoch != 3  # the best validation epoch, recorded truthfully by both
    assert best.tested_epoch == best.best_epoch and last.tested_epoch == 3 == last.epochs_trained - 1
    # the reported train/val metrics are those of the tested epoch
    assert {k: v for k, v in best.metrics.items() if not k.startswith("test/")} == epoch_metrics(best.history[best.best_epoch])
    assert {k: v for k, v in last.metrics.items() if not k.startswith("test/")} == epoch_metrics(last.history[-1])
    # and the test ran on other weights than the best epoch's
    assert last.metrics["test/loss"] != best.metrics["test/loss"]


def test_an_unknown_checkpoint_is_named_with_the_valid_ones(compose_cfg: Callable[..., DictConfig]) -> None:
    with pytest.raises(ConfigError, match=r"task.checkpoint='first' is not valid; valid: \['best', 'last'\]"):
        train(compose_cfg(RUN), checkpoint="first")


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (["dataset=cora"], "best"),
        (["dataset=syn-cora"], "last"),
        (["dataset=syn-cora", "task=memorization"], "last"),
        (["dataset=syn-cora", "task=mia"], "last"),
        (["dataset=syn-cora", "task.checkpoint=best"], "best"),
        (["experiment=ncmemo/gcn", "dataset=cora"], "last"),
        (["experiment=ncmemo/gcn", "dataset=cora", "task.checkpoint=best"], "best"),
    ],
)
def test_ncmemo_and_syn_cora_score_at_the_last_epoch(
    compose_cfg: Callable[..., DictConfig], overrides: list[str], expected: str
) -> None:
    assert compose_cfg(overrides).task.checkpoint == expected


def test_tasks_without_a_checkpoint_choice_get_none_on_syn_cora(compose_cfg: Callable[..., DictConfig]) -> None:
    assert "checkpoint" not in compose_cfg(["dataset=syn-cora", "task=igb"]).task


def test_without_the_history_callback_the_record_leaves_its_fields_empty(
    compose_cfg: Callable[..., DictConfig], tmp_path: Path
) -> None:
    """``python run.py ~callbacks.history``: the run completes and is tested at the same best epoch (the
    checkpoint's weights), but nothing recorded the epochs: no history, best or tested epoch, train/val metrics."""
    run_dir = tmp_path / "cli"
    proc = run_cli([*RUN, "~callbacks.history", f"hydra.run.dir={run_dir}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((run_dir / "results.json").read_text())
    assert results["status"] == "completed" and "history" not in results["config"]["callbacks"]
    assert (results["history"], results["epochs_trained"], results["best_epoch"], results["tested_epoch"]) == (
        [],
        None,
        None,
        None,
    )
    assert results["time_per_epoch_s"] > 0 and (run_dir / "predictions.npz").is_file()  # the other callbacks still ran
    with_history = run(compose_cfg, tmp_path / "with", "best")
    assert set(results["metrics"]) == {"test/loss", "test/accuracy"}
    assert results["metrics"] == pytest.approx({k: v for k, v in with_history.metrics.items() if k.startswith("test/")})


def test_without_the_best_checkpoint_the_run_says_what_it_needs(compose_cfg: Callable[..., DictConfig], tmp_path: Path) -> None:
    """Without ``callbacks.checkpoint`` testing the best epoch is refused in one line; with
    ``task.checkpoint=last`` the history, which records the epoch a checkpoint keeps, refuses to run
    without it; without both, ``task.checkpoint=last`` runs."""
    refusal = "failed: task.checkpoint=best tests the weights that callbacks.checkpoint keeps: keep callbacks.checkpoint, or set task.checkpoint=last"
    only = run_task(compose_cfg([*RUN, "~callbacks.checkpoint"], run_dir=tmp_path / "a"))
    assert only.status == refusal
    history_only = run_task(compose_cfg([*RUN, "~callbacks.checkpoint", "task.checkpoint=last"], run_dir=tmp_path / "d"))
    assert history_only.status.startswith("failed: callbacks.history records the epoch a ModelCheckpoint with a monitor keeps")
    both = ["~callbacks.checkpoint", "~callbacks.history"]
    best = run_task(compose_cfg([*RUN, *both], run_dir=tmp_path / "b"))
    assert best.status == refusal
    last = run_task(compose_cfg([*RUN, *both, "task.checkpoint=last"], run_dir=tmp_path / "c"))
    assert last.status == "completed" and last.best_epoch is None and set(last.metrics) == {"test/loss", "test/accuracy"}
    assert not (tmp_path / "c" / "checkpoints" / "best.ckpt").exists()


def test_the_early_stopping_preset_stops_the_run(compose_cfg: Callable[..., DictConfig], tmp_path: Path) -> None:
    """``callbacks=[early_stopping,lr_monitor]``: with a min_delta no accuracy can beat, the run stops after
    ``patience`` epochs without improvement (2 of 6: the first sets the best), and the rate reaches the log."""
    overrides = [
        *FAST_CYCLES,
        "trainer.max_epochs=6",
        "callbacks=[early_stopping,lr_monitor]",
        "callbacks.early_stopping.patience=1",
        "callbacks.early_stopping.min_delta=1.0",
    ]
    record = run_task(compose_cfg(overrides, run_dir=tmp_path / "run"))
    assert record.status == "completed"
    assert record.epochs_trained == 2 and [e["epoch"] for e in record.history] == [0, 1]
    with (tmp_path / "run" / "csv" / "metrics.csv").open() as handle:
        rates = [float(row["lr-Adam"]) for row in csv.DictReader(handle) if row.get("lr-Adam")]
    assert rates == [0.001, 0.001]
