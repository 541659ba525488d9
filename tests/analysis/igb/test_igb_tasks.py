"""task=igb and task=validutil in process on a tiny Cora fixture (official raw format), and the
full-batch fit they share."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig

from graphbench.analysis.igb.fit import FullBatchRecipe, fit, igb_fit
from graphbench.analysis.igb.tasks import igb
from graphbench.analysis.igb.validutil import VALIDUTIL_CSV, validutil
from graphbench.analysis.subset_training import node_datamodule
from graphbench.errors import ConfigError
from tests.data.sources.node.planetoid_fixture import write_planetoid
from tests.paths import REPO


def cora_cfg(tmp_path: Path, *extra: str) -> DictConfig:
    write_planetoid(tmp_path / "data", "cora")
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        return compose(
            "config",
            overrides=[
                "experiment=planetoid/cora-gcn",
                "trainer.max_epochs=4",
                "optimizer.lr=0.1",
                f"paths.data_dir={tmp_path / 'data'}",
                f"paths.cache_dir={tmp_path / 'cache'}",
                f"paths.output_dir={tmp_path / 'out'}",
                *extra,
            ],
        )


def test_fit_is_deterministic_and_retraining_runs_the_selected_epochs(tmp_path: Path) -> None:
    cfg = cora_cfg(tmp_path, "dataset.split=igb")
    dm = node_datamodule(cfg)
    recipe = FullBatchRecipe.from_config(cfg, dm.info)
    first = fit(recipe, dm.graph, seed=1, select=True)
    again = fit(recipe, dm.graph, seed=1, select=True)
    assert (first.epochs, first.val, first.test) == (again.epochs, again.val, again.test)
    assert 1 <= first.epochs <= 4
    selection, final = igb_fit(recipe, dm.graph, seed=1)
    assert final.epochs == selection.epochs == first.epochs
    assert fit(recipe, dm.graph, seed=1, select=False, epochs=3).epochs == 3


def test_a_scheduler_is_refused_with_the_fix(tmp_path: Path) -> None:
    cfg = cora_cfg(tmp_path, "scheduler=plateau")
    with pytest.raises(ConfigError, match="scheduler=none"):
        FullBatchRecipe.from_config(cfg, node_datamodule(cfg).info)


def test_igb_task_records_selection_and_retrained_test(tmp_path: Path) -> None:
    record = igb(cora_cfg(tmp_path, "dataset.split=igb"))
    assert record.status == "completed"
    assert record.epochs_trained == record.best_epoch and 1 <= record.best_epoch <= 4
    assert set(record.metrics) == {"train/accuracy", "val/accuracy", "test/accuracy", "selection/test_accuracy"}
    assert (tmp_path / "out" / "results.json").is_file()


def test_validutil_reports_the_inflation_of_tuned_pseudo_labels(tmp_path: Path) -> None:
    record = validutil(cora_cfg(tmp_path), num_val_nodes=2, iterations=2)
    assert record.status == "completed"
    m = record.metrics
    assert m["validutil/inflation"] == pytest.approx(m["test/accuracy"] - m["validutil/baseline_test_accuracy"])
    assert 0.0 <= m["validutil/pseudo_label_accuracy"] <= 1.0 and m["validutil/num_val_nodes"] == 2
    with (tmp_path / "out" / VALIDUTIL_CSV).open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 2 and all(0 <= int(r["tuned"]) < 3 for r in rows)


def test_validutil_with_too_many_nodes_fails_with_a_truthful_status(tmp_path: Path) -> None:
    record = validutil(cora_cfg(tmp_path), num_val_nodes=10_000, iterations=1)
    assert record.status.startswith("failed: task.num_val_nodes=10000 must lie in 1..")
