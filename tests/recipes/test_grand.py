"""experiment=planetoid/{cora,citeseer}-grand against THUDM/GRAND@7a2fd6e7c3f20ca2c84b06ec1c5dc7f227dbfe2b:
run_cora.sh / run_citeseer.sh (the flags), train_grand.py (the argparse defaults the scripts leave) and
pygcn/models.py, pygcn/layers.py (the MLP and its initialization), key by key, and the built network's
structure against the source's MLP."""

from __future__ import annotations

from typing import Any

import pytest
from torch import nn

from graphbench.build.model import network_builder
from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.modules.network import count_parameters
from tests.recipes._source import composed, deviation_keys, mismatches

GRAND_COMMIT = "7a2fd6e7c3f20ca2c84b06ec1c5dc7f227dbfe2b"
#: train_grand.py's defaults that both scripts keep: --weight_decay 5e-4 (Adam over every parameter), no --use_bn,
#: load_data's row-normalized features, MLPLayer's init
TRAIN_GRAND_DEFAULTS: dict[str, Any] = {
    "optimizer.weight_decay": 5.0e-4,
    "optimizer._target_": "torch.optim.Adam",
    "normalization.name": "none",
    "dataset.normalize_features": True,
    "dataset.split": "public",
    "model.init": "grand",
}
#: run_cora.sh: --lam 1.0 --tem 0.5 --order 8 --sample 4 --input_droprate 0.5 --hidden_droprate 0.5 --hidden 32
#: --lr 0.01 --patience 200 --dropnode_rate 0.5
RUN_CORA: dict[str, Any] = {
    "model.consistency.weight": 1.0,
    "model.consistency.temperature": 0.5,
    "model.layer.order": 8,
    "model.consistency.num_augmentations": 4,
    "model.layer.dropout": 0.5,
    "model.dropout": 0.5,
    "model.hidden_dim": 32,
    "optimizer.lr": 0.01,
    "callbacks.early_stopping.patience": 200,
    "model.layer.drop_node": 0.5,
    **TRAIN_GRAND_DEFAULTS,
}
#: run_citeseer.sh: --lam 0.7 --tem 0.3 --order 2 --sample 2 --input_droprate 0.0 --hidden_droprate 0.2 --hidden 32
#: --lr 0.01 --patience 200 --dropnode_rate 0.5
RUN_CITESEER: dict[str, Any] = {
    **RUN_CORA,
    "model.consistency.weight": 0.7,
    "model.consistency.temperature": 0.3,
    "model.layer.order": 2,
    "model.consistency.num_augmentations": 2,
    "model.layer.dropout": 0.0,
    "model.dropout": 0.2,
}
RECIPES = {"cora": RUN_CORA, "citeseer": RUN_CITESEER}


def source_mlp(features: int, hidden: int, classes: int) -> nn.Module:
    """pygcn/models.py ``MLP(use_bn=False)`` as PyG-free modules: layer1 (F -> hidden), layer2 (hidden -> C),
    each a weight and a bias."""
    return nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, classes))


@pytest.mark.parametrize("dataset", ["cora", "citeseer"])
def test_the_recipe_is_the_script_on_every_transcribed_key(dataset: str) -> None:
    cfg = composed(f"experiment=planetoid/{dataset}-grand")
    assert mismatches(cfg, RECIPES[dataset]) == []
    assert GRAND_COMMIT in cfg.recipe_card.source
    assert deviation_keys(cfg) == ["trainer.max_epochs", "callbacks.early_stopping.monitor", "callbacks.checkpoint.monitor"]


def test_changing_one_transcribed_key_fails_the_comparison() -> None:
    cfg = composed("experiment=planetoid/cora-grand", "model.consistency.temperature=0.4")
    assert mismatches(cfg, RUN_CORA) == ["model.consistency.temperature: ours 0.4, source 0.5"]
    cfg = composed("experiment=planetoid/cora-grand", "model.init=default")
    assert mismatches(cfg, RUN_CORA) == ["model.init: ours 'default', source 'grand'"]


@pytest.mark.parametrize(("dataset", "features", "classes"), [("cora", 1433, 7), ("citeseer", 3703, 6)])
def test_the_network_is_the_sources_mlp(dataset: str, features: int, classes: int) -> None:
    cfg = composed(f"experiment=planetoid/{dataset}-grand", "speedups=off")
    info = DatasetInfo(dataset, "node", "multiclass", classes, "accuracy", True, FeatureSpec("dense", features), None)
    network = network_builder(cfg, info)(int(cfg.model.hidden_dim))
    assert count_parameters(network) == count_parameters(source_mlp(features, 32, classes))
    linear = [m for m in network.modules() if isinstance(m, nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linear] == [(features, 32), (32, classes)]
    assert not any(isinstance(m, (nn.BatchNorm1d, nn.LayerNorm)) for m in network.modules())
    assert type(network.act) is nn.ReLU
    # dropout: the layer's input dropout on the propagated features, then the hidden dropout after ReLU
    assert (network.layers[0].dropout.p, network.dropout.p, network.input_dropout.p) == (
        cfg.model.layer.dropout,
        cfg.model.dropout,
        0.0,
    )
    # pygcn/layers.py: every weight and bias ~ N(-1/sqrt(out), 1/sqrt(out)); the first map's 32 x F weights
    weight = linear[0].weight
    assert abs(float(weight.mean()) + 32**-0.5) < 0.01 and abs(float(weight.std()) - 32**-0.5) < 0.01
