"""ValidUtil's parts on a tiny Cora fixture: the tuning loop (best class kept, the initial pseudo-label on a tie,
each tuned label a target of the later nodes' fits), phase 1's pseudo-labels, the node count and phase checks, the
final setting's lookup and the label files read in place of the tuning."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from graphbench.analysis.igb import validutil as validutil_module
from graphbench.analysis.igb.fit import FitResult, FullBatchRecipe
from graphbench.analysis.igb.validutil import (
    by_model_and_dataset,
    final_setting,
    initial_pseudo_labels,
    phase_config,
    read_labels,
    tune_pseudo_labels,
    tuned_node_count,
    with_validation_trained,
)
from graphbench.analysis.subset_training import node_datamodule
from graphbench.vocabulary.errors import ConfigError
from tests.tasks.test_igb import cora_cfg


def test_each_node_keeps_its_best_class_the_initial_label_on_a_tie_and_feeds_the_later_fits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Three classes; node 0's class 2 scores best, node 1's classes all tie (its initial label 1 is kept)."""
    seen: list[torch.Tensor] = []

    def fit_many(recipe, graph, seed, candidates):
        seen.append(candidates.clone())
        scores = [0.1, 0.2, 0.9] if len(seen) == 1 else [0.5, 0.5, 0.5]
        return [FitResult(1, 0.0, s, 0.0, torch.zeros(0)) for s in scores]

    monkeypatch.setattr(validutil_module, "fit_many", fit_many)
    truth = torch.tensor([0, 1, 2])
    initial = torch.tensor([1, 1, 2])
    labels = initial.clone()
    rows = tune_pseudo_labels(None, Data(), 0, labels, initial, truth, torch.tensor([0, 1]), 3)  # type: ignore[arg-type]
    assert labels.tolist() == [2, 1, 2]
    assert rows == [
        {"node": 0, "label": 0, "initial": 1, "tuned": 2, "val_accuracy": 0.9},
        {"node": 1, "label": 1, "initial": 1, "tuned": 1, "val_accuracy": 0.5},
    ]
    assert seen[0][:, 0].tolist() == [0, 1, 2] and seen[0][:, 1:].tolist() == [[1, 2]] * 3
    assert seen[1][:, 0].tolist() == [2, 2, 2] and seen[1][:, 1].tolist() == [0, 1, 2]  # node 0's tuned label


def test_phase_one_predicts_the_validation_nodes_and_keeps_the_other_labels(tmp_path: Path) -> None:
    cfg = cora_cfg(tmp_path, "trainer.max_epochs=2")
    dm = node_datamodule(cfg)
    graph = dm.graph
    labels = initial_pseudo_labels(FullBatchRecipe.from_config(cfg, dm.info), graph, graph, seed=0)
    assert torch.equal(labels[~graph.val_mask], graph.y[~graph.val_mask])
    assert int(labels.min()) >= 0 and int(labels.max()) < dm.info.num_outputs
    augmented = with_validation_trained(graph, graph)
    assert torch.equal(augmented.train_mask, graph.train_mask | graph.val_mask) and augmented is not graph


def test_the_node_count_is_all_by_default_and_must_lie_in_range() -> None:
    assert (tuned_node_count(None, 5), tuned_node_count(2, 5)) == (5, 2)
    for count in (0, 6):
        with pytest.raises(ConfigError, match=rf"^task.num_val_nodes={count} must lie in 1..5 \(the validation nodes\)"):
            tuned_node_count(count, 5)


def test_phase_values_layer_in_order_and_a_list_is_refused(tmp_path: Path) -> None:
    cfg = cora_cfg(tmp_path)
    phase = phase_config(cfg, "tuning", {"optimizer": {"lr": 0.02}}, None, {"optimizer": {"lr": 0.03}})
    assert phase.optimizer.lr == 0.03 and cfg.optimizer.lr == 0.1
    with pytest.raises(ConfigError, match=r"^task.baseline.optimizer.lr=\[0.01, 0.02\]: a phase takes one value"):
        phase_config(cfg, "baseline", {"optimizer": {"lr": [0.01, 0.02]}})
    assert by_model_and_dataset({"gcn": {"cora": {"x": 1}}}, cfg) == {"x": 1}
    assert by_model_and_dataset({"gcn": {"citeseer": {}}}, cfg) is None and by_model_and_dataset(None, cfg) is None
    assert final_setting({"settings": {"gcn": {"cora": {"x": 1}}}}, cfg) == {"x": 1}
    with pytest.raises(ConfigError, match=r"^task.final.settings has no setting for model=gcn on dataset=cora"):
        final_setting({"settings": {}}, cfg)


@pytest.mark.parametrize("suffix", [".txt", ".npy", ".pt"])
def test_label_files_are_read_in_each_format(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"labels{suffix}"
    values = [0, 2, 1]
    if suffix == ".txt":
        path.write_text(" ".join(map(str, values)))
    elif suffix == ".npy":
        np.save(path, np.array(values))
    else:
        torch.save(torch.tensor(values), path)
    assert read_labels(str(path), 3, 3).tolist() == values


def test_a_wrong_label_file_is_one_line_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        read_labels(str(tmp_path / "missing.txt"), 3, 3)
    other = tmp_path / "labels.csv"
    other.write_text("0")
    with pytest.raises(ConfigError, match=r"expected a .npy, .txt or .pt file"):
        read_labels(str(other), 1, 3)
    wrong = tmp_path / "labels.txt"
    wrong.write_text("0 3")
    with pytest.raises(ConfigError, match=r"expected 2 labels in 0..2 \(one per validation node\), got 2 in 0..3"):
        read_labels(str(wrong), 2, 3)
