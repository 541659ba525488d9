"""task=validutil in process on a tiny Cora fixture: every validation node tuned on, the code's final model (runs
averaged) or graphbench's grid search, one-line failures for bad phase settings, node counts and a missing final
setting, and experiment=igb/validutil-ppnp's IGB settings."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from graphbench.analysis.igb.fit import FullBatchRecipe, flatten, with_overrides
from graphbench.analysis.igb.validutil import VALIDUTIL_CSV, final_config
from graphbench.analysis.subset_training import node_datamodule
from graphbench.modules.layers import APPNPLayer
from graphbench.tasks.validutil import validutil
from tests.tasks.test_igb import cora_cfg

TINY_PHASE = {"trainer": {"max_epochs": 2}}
GCN_SETTING = {"model": {"hidden_dim": 8, "dropout": 0.1, "input_dropout": 0.0}, "optimizer": {"lr": 0.05, "weight_decay": 1e-4}}
TINY_FINAL = {"runs": 3, "patience": 2, "shared": {"trainer": {"max_epochs": 6}}, "settings": {"gcn": {"cora": GCN_SETTING}}}


def test_validutil_runs_the_codes_final_model_and_averages_its_runs(tmp_path: Path) -> None:
    record = validutil(cora_cfg(tmp_path), num_val_nodes=2, baseline=TINY_PHASE, tuning=TINY_PHASE, final=TINY_FINAL)
    assert record.status == "completed"
    m = record.metrics
    assert (m["final/runs"], m["final/model.hidden_dim"], m["final/optimizer.lr"]) == (3.0, 8.0, 0.05)
    assert m["validutil/inflation"] == pytest.approx(m["test/accuracy"] - m["validutil/baseline_test_accuracy"])
    assert m["validutil/test_accuracy_std"] >= 0.0 and not any(key.startswith("grid/") for key in m)
    assert record.best_epoch is not None and 0 <= record.best_epoch <= 5 and record.epochs_trained == 6  # epochs from 0


def test_a_model_and_dataset_without_a_final_setting_fail_before_the_tuning_and_name_the_fix(tmp_path: Path) -> None:
    final = {**TINY_FINAL, "settings": {"gcn": {"citeseer": GCN_SETTING}}}
    record = validutil(cora_cfg(tmp_path), num_val_nodes=1, final=final)
    assert record.status == (
        "failed: task.final.settings has no setting for model=gcn on dataset=cora (the IGB code's final_scripts.sh sets "
        "gcn, appnp and mixhop on cora and citeseer): add task.final.settings.gcn.cora={...} or search a grid instead "
        "(task/grid=final_scripts)"
    )


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
    record = validutil(cora_cfg(tmp_path), baseline={"optimizer": {"lr": [0.01, 0.02]}}, final=TINY_FINAL)
    assert record.status.startswith("failed: task.baseline.optimizer.lr=[0.01, 0.02]: a phase takes one value")


def test_validutil_with_too_many_nodes_fails_with_a_truthful_status(tmp_path: Path) -> None:
    record = validutil(cora_cfg(tmp_path), num_val_nodes=10_000, baseline=TINY_PHASE)
    assert record.status.startswith("failed: task.num_val_nodes=10000 must lie in 1..")


def test_the_ppnp_experiment_tunes_with_the_igb_codes_ppnp_and_runs_final_scripts_appnp_setting(tmp_path: Path) -> None:
    cfg = cora_cfg(tmp_path, experiment="igb/validutil-ppnp")  # 4 epochs for the final model
    info = node_datamodule(cfg).info
    for phase in ("baseline", "tuning"):
        phase_cfg = with_overrides(cfg, flatten(cfg.task[phase]))  # as the task builds a phase's config
        recipe = FullBatchRecipe.from_config(phase_cfg, info)
        (layer,) = [m for m in recipe.make_network(recipe.hidden_dim).modules() if isinstance(m, APPNPLayer)]
        # valid_util_gene_labels.py: PPNP_PYG(num_hidden=16, dropout=0, K=10, alpha=0.5)
        assert (recipe.hidden_dim, layer.linear.in_features, layer.propagate.K, layer.propagate.alpha) == (16, 16, 10, 0.5)
        assert (layer.dropout.p, layer.propagate.dropout, phase_cfg.model.input_dropout) == (0.0, 0.0, 0.0)
    # final_scripts.sh: APPNP on Cora: --lr 0.01 --hidden 64 --dropout 0.6 --weight_decay 0.0001 --K 8 --alpha 0.3
    final_cfg = final_config(cfg, cfg.task.every_phase, cfg.task.final)
    recipe = FullBatchRecipe.from_config(final_cfg, info)
    (layer,) = [m for m in recipe.make_network(recipe.hidden_dim).modules() if isinstance(m, APPNPLayer)]
    assert (recipe.hidden_dim, layer.propagate.K, layer.propagate.alpha, layer.propagate.dropout) == (64, 8, 0.3, 0.0)
    assert (layer.dropout.p, final_cfg.model.input_dropout, final_cfg.optimizer.lr, final_cfg.optimizer.weight_decay) == (
        0.6,
        0.6,
        0.01,
        1e-4,
    )
    tiny = {"trainer": {"max_epochs": 2}}
    final = {**cfg.task.final, "runs": 2, "shared": {"trainer": {"max_epochs": 3}}}
    record = validutil(cfg, num_val_nodes=1, baseline=tiny, tuning=tiny, final=final)
    assert record.status == "completed" and (record.metrics["final/model.layer.K"], record.metrics["final/runs"]) == (8.0, 2.0)


def test_given_tuned_labels_replace_the_tuning_and_a_wrong_file_fails_naming_it(tmp_path: Path) -> None:
    cfg = cora_cfg(tmp_path)
    graph = node_datamodule(cfg).graph
    truth = graph.y[graph.val_mask].tolist()
    labels = tmp_path / "labels.txt"
    labels.write_text(" ".join(str(c) for c in truth))
    record = validutil(cfg, baseline=TINY_PHASE, final=TINY_FINAL, tuned_labels=str(labels))
    assert record.status == "completed" and record.metrics["validutil/pseudo_label_accuracy"] == 1.0
    assert (tmp_path / "out" / VALIDUTIL_CSV).read_text().splitlines() == ["node,label,initial,tuned,val_accuracy"]
    labels.write_text("0 1")
    cfg.paths.output_dir = str(tmp_path / "out2")
    record = validutil(cfg, baseline=TINY_PHASE, final=TINY_FINAL, tuned_labels=str(labels))
    assert record.status == (
        f"failed: task.tuned_labels={labels}: expected {len(truth)} labels in 0..2 (one per validation node), got 2 in 0..1"
    )
