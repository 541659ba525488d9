"""``task.checkpoint`` of :func:`graphbench.tasks.train.train`: the weights a run is tested with, those of the
best validation epoch (the default) or of the last epoch (the NCMemo study's protocol)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from omegaconf import DictConfig

from graphbench.run.cli import run_task
from graphbench.run.errors import ConfigError
from graphbench.run.record import RunRecord
from graphbench.tasks.train import train
from tests.conftest import FAST_CYCLES

#: four epochs whose best validation accuracy is not the last epoch's (deterministic for this seed)
RUN = [*FAST_CYCLES, "trainer.max_epochs=4", "optimizer.lr=0.05", "seed=1", "logger=none"]


def run(compose_cfg: Callable[..., DictConfig], run_dir: Path, checkpoint: str) -> RunRecord:
    record = run_task(compose_cfg([*RUN, f"task.checkpoint={checkpoint}"], run_dir=run_dir))  # as run.py runs it
    assert record.status == "completed"
    return record


def train_val(epoch: dict) -> dict:
    return {k: v for k, v in epoch.items() if k.startswith(("train/", "val/")) and not k.endswith("_best")}


def test_last_tests_the_last_epoch_and_records_which(compose_cfg: Callable[..., DictConfig], tmp_path: Path) -> None:
    best = run(compose_cfg, tmp_path / "best", "best")
    last = run(compose_cfg, tmp_path / "last", "last")
    assert [e["val/accuracy"] for e in best.history] == [e["val/accuracy"] for e in last.history]  # the same training
    assert best.best_epoch == last.best_epoch != 3  # the best validation epoch, recorded truthfully by both
    assert best.tested_epoch == best.best_epoch and last.tested_epoch == 3 == last.epochs_trained - 1
    # the reported train/val metrics are those of the tested epoch
    assert {k: v for k, v in best.metrics.items() if not k.startswith("test/")} == train_val(best.history[best.best_epoch])
    assert {k: v for k, v in last.metrics.items() if not k.startswith("test/")} == train_val(last.history[-1])
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
