"""The planetoid/* recipes (and igb/cora-appnp) against their papers' set-ups, key by key: every transcribed key
equals the composed config's unless the recipe card declares it a deviation; changing one transcribed key fails.
(planetoid/*-grand: tests/recipes/test_grand.py, against the authors' scripts.)"""

from __future__ import annotations

from typing import Any

import pytest

from tests.recipes._source import composed, mismatches, undeclared

PUBLIC = {"dataset.split": "public", "dataset.normalize_features": True, "normalization.name": "none", "scheduler.name": "none"}
#: Kipf & Welling 2017, Section 5.1: 2 layers, 16 hidden units, dropout 0.5 (input and hidden), L2 5e-4, Adam lr 0.01,
#: 200 epochs, row-normalized features
KIPF_WELLING: dict[str, Any] = {
    **PUBLIC,
    "model.num_layers": 2,
    "model.hidden_dim": 16,
    "model.dropout": 0.5,
    "model.input_dropout": 0.5,
    "optimizer.weight_decay": 5.0e-4,
    "optimizer.lr": 0.01,
    "trainer.max_epochs": 200,
    "model.encode_inputs": False,
    "model.last_layer_outputs": True,
    "model.residual": False,
}
#: Velickovic et al. 2018, Section 3.3 (Cora): 8 heads of 8 features, ELU, dropout 0.6 on both layers' inputs and on
#: the normalized attention coefficients, L2 5e-4, Adam lr 0.005, a one-head attention output layer
GAT: dict[str, Any] = {
    **PUBLIC,
    "model.layer.heads": 8,
    "model.hidden_dim": 64,
    "model.activation": "elu",
    "model.dropout": 0.6,
    "model.input_dropout": 0.6,
    "model.layer.attn_dropout": 0.6,
    "optimizer.weight_decay": 5.0e-4,
    "optimizer.lr": 0.005,
    "head.name": "attention",
}
#: Klicpera et al. 2019, Section 6: hidden 64, dropout 0.5 on the features and the MLP, 0.5 on the adjacency, K = 10,
#: teleport 0.1, L2 5e-3, Adam lr 0.01
APPNP: dict[str, Any] = {
    **PUBLIC,
    "model.hidden_dim": 64,
    "model.input_dropout": 0.5,
    "model.layer.dropout": 0.5,
    "model.layer.edge_dropout": 0.5,
    "model.layer.K": 10,
    "model.layer.alpha": 0.1,
    "optimizer.weight_decay": 5.0e-3,
    "optimizer.lr": 0.01,
}
#: Chen et al. 2020, Section 5.1 (Cora): 64 layers of width 64, alpha 0.1, lambda 0.5, dropout 0.6, Adam lr 0.01,
#: at most 1500 epochs
GCNII: dict[str, Any] = {
    **PUBLIC,
    "model.layer.num_convs": 64,
    "model.hidden_dim": 64,
    "model.layer.alpha": 0.1,
    "model.layer.theta": 0.5,
    "model.layer.dropout": 0.6,
    "optimizer.lr": 0.01,
    "trainer.max_epochs": 1500,
}
#: chennnM/GCNII@ca91f5686c4cd09cc1c6f98431a5d5b7e36acc92 semi.sh (CiteSeer): --layer 32 --hidden 256 --lamda 0.6
#: --dropout 0.7, train.py's --alpha 0.1, --lr 0.01, --epochs 1500, --wd2 5e-4 (dense layers)
GCNII_CITESEER: dict[str, Any] = {
    **PUBLIC,
    "dataset.name": "citeseer",
    "model.layer.num_convs": 32,
    "model.hidden_dim": 256,
    "model.layer.alpha": 0.1,
    "model.layer.theta": 0.6,
    "model.layer.dropout": 0.7,
    "model.input_dropout": 0.7,
    "optimizer.lr": 0.01,
    "optimizer.weight_decay": 5.0e-4,
    "trainer.max_epochs": 1500,
}
#: Abu-El-Haija et al. 2019, Section 6 (Planetoid): adjacency powers {0, 1, 2}, 20 channels each, L2 5e-4, input dropout
MIXHOP: dict[str, Any] = {**PUBLIC, "model.layer.powers": [0, 1, 2], "model.hidden_dim": 60, "optimizer.weight_decay": 5.0e-4}
#: Hamilton et al. 2017's mean aggregator on the Kipf & Welling set-up
SAGE: dict[str, Any] = {**KIPF_WELLING, "model.name": "sage"}

RECIPES: dict[str, dict[str, Any]] = {
    "planetoid/cora-gcn": KIPF_WELLING,
    "planetoid/cora-gat": GAT,
    "planetoid/cora-appnp": APPNP,
    "igb/cora-appnp": APPNP,
    "planetoid/cora-gcnii": GCNII,
    "planetoid/citeseer-gcnii": GCNII_CITESEER,
    "planetoid/cora-mixhop": MIXHOP,
    "planetoid/cora-sage": SAGE,
}


@pytest.mark.parametrize("experiment", list(RECIPES))
def test_the_recipe_is_its_paper_wherever_its_card_does_not_say_otherwise(experiment: str) -> None:
    cfg = composed(f"experiment={experiment}")
    assert undeclared(cfg, RECIPES[experiment]) == []


def test_the_declared_deviations_are_the_real_ones() -> None:
    assert mismatches(composed("experiment=planetoid/cora-gat"), GAT) == ["head.name: ours 'linear', source 'attention'"]
    assert [m.split(":")[0] for m in mismatches(composed("experiment=igb/cora-appnp"), APPNP)] == [
        "model.layer.edge_dropout",
        "optimizer.weight_decay",
    ]


def test_changing_one_transcribed_key_fails_the_comparison() -> None:
    cfg = composed("experiment=planetoid/cora-gcn", "model.input_dropout=0.0")
    assert undeclared(cfg, KIPF_WELLING) == ["model.input_dropout: ours 0.0, source 0.5"]


def test_the_citeseer_gcnii_is_semi_sh_line_and_a_changed_depth_fails() -> None:
    assert mismatches(composed("experiment=planetoid/citeseer-gcnii"), GCNII_CITESEER) == []
    cfg = composed("experiment=planetoid/citeseer-gcnii", "model.layer.num_convs=64")
    assert undeclared(cfg, GCNII_CITESEER) == ["model.layer.num_convs: ours 64, source 32"]
