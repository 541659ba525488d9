"""task=validutil in process on a tiny Cora fixture: every validation node tuned on, the final model grid-searched,
one-line failures for bad phase settings and node counts, and experiment=igb/validutil-ppnp's IGB settings."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from graphbench.analysis.igb.fit import FullBatchRecipe, flatten, grid_points, with_overrides
from graphbench.analysis.subset_training import node_datamodule
from graphbench.modules.layers import APPNPLayer
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


def test_the_ppnp_experiment_tunes_with_the_igb_codes_ppnp_and_searches_final_scripts_grid(tmp_path: Path) -> None:
    cfg = cora_cfg(tmp_path, experiment="igb/validutil-ppnp")  # 4 epochs for the final model
    info = node_datamodule(cfg).info
    for phase in ("baseline", "tuning"):
        phase_cfg = with_overrides(cfg, flatten(cfg.task[phase]))  # as the task builds a phase's config
        recipe = FullBatchRecipe.from_config(phase_cfg, info)
        (layer,) = [m for m in recipe.make_network(recipe.hidden_dim).modules() if isinstance(m, APPNPLayer)]
        # valid_util_gene_labels.py: PPNP_PYG(num_hidden=16, dropout=0, K=10, alpha=0.5)
        assert (recipe.hidden_dim, layer.linear.in_features, layer.propagate.K, layer.propagate.alpha) == (16, 16, 10, 0.5)
        assert (layer.dropout.p, layer.propagate.dropout, phase_cfg.model.input_dropout) == (0.0, 0.0, 0.0)
    points = grid_points(cfg.task.grid)
    # final_scripts.sh: APPNP on Cora (dropout 0.6, K 8) and on CiteSeer (dropout 0.3, K 6), both
    # hidden 64, alpha 0.3, lr 0.01, weight decay 1e-4; PPNP_PYG's one dropout is both of graphbench's
    shared = {"model.hidden_dim": 64, "model.dropout": 0.0, "model.layer.alpha": 0.3, "optimizer.lr": 0.01}
    for dropout, k in ((0.6, 8), (0.3, 6)):
        wanted = {**shared, "model.input_dropout": dropout, "model.layer.dropout": dropout, "model.layer.K": k}
        assert any(all(point[key] == value for key, value in wanted.items()) for point in points), wanted
    assert len(points) == 8 and all(point["optimizer.weight_decay"] == 1e-4 for point in points)
    tiny = {"trainer": {"max_epochs": 2}}
    record = validutil(cfg, num_val_nodes=1, baseline=tiny, tuning=tiny, grid={"model": {"layer": {"K": [2]}}})
    assert record.status == "completed" and record.metrics["grid/model.layer.K"] == 2
