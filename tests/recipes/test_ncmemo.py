"""experiment=ncmemo/gcn against the NCMemo study's code (SBM/model.py NodeGCN, SBM/main_syncora.py and SBM/train.py
defaults, as conf/recipe/ncmemo/gcn.yaml and conf/recipe/syn-cora.yaml transcribe them), key by key."""

from __future__ import annotations

from typing import Any

import pytest

from graphbench.tasks.memorization import uses_largest_component, uses_stratified_split
from tests.recipes._source import composed, undeclared

#: NodeGCN: GCNConv(F -> 32) -> ReLU -> GCNConv(32 -> 32) -> ReLU -> GCNConv(32 -> C), no dropout; Adam lr 0.01,
#: weight decay 5e-4, 100 full-batch epochs on the raw features, scored at the last epoch; the node subsets
#: in node-index order (SBM/memorization.py get_node_splits), the last seed's f and g scored (train_models
#: returns them), g built after training f, so from other weights (SBM/train.py)
NCMEMO_GCN: dict[str, Any] = {
    "model.name": "gcn",
    "model.hidden_dim": 32,
    "model.num_layers": 3,
    "model.dropout": 0.0,
    "model.input_dropout": 0.0,
    "model.encode_inputs": False,
    "model.last_layer_outputs": True,
    "model.residual": False,
    "normalization.name": "none",
    "optimizer.lr": 0.01,
    "optimizer.weight_decay": 5.0e-4,
    "trainer.max_epochs": 100,
    "dataset.normalize_features": False,
    "task.checkpoint": "last",
    "task.subset_order": "index",
    "task.scored_seeds": "last",
    "task.init": "independent",
}


def test_the_recipe_is_the_studys_code_on_every_transcribed_key() -> None:
    assert undeclared(composed("experiment=ncmemo/gcn", "dataset=cora"), NCMEMO_GCN) == []


def test_changing_one_transcribed_key_fails_the_comparison() -> None:
    cfg = composed("experiment=ncmemo/gcn", "dataset=cora", "task.checkpoint=best")
    assert undeclared(cfg, NCMEMO_GCN) == ["task.checkpoint: ours 'best', source 'last'"]


@pytest.mark.parametrize(
    ("dataset", "largest_component", "per_class"),
    [
        ("syn-cora", False, True),  # SBM/main_syncora.py: the whole graph, CustomDataset's split per class
        ("cora", True, False),  # RealWorld/getdataset.py: LargestConnectedComponents(), then RandomNodeSplit
    ],
)
def test_the_graph_and_split_are_the_studys_code_for_each_kind_of_graph(
    dataset: str, largest_component: bool, per_class: bool
) -> None:
    cfg = composed("experiment=ncmemo/gcn", f"dataset={dataset}")
    assert uses_largest_component(cfg.task.graph, cfg.dataset) is largest_component
    assert uses_stratified_split(cfg.task.stratified, cfg.dataset) is per_class
