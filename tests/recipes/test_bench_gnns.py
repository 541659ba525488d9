"""experiment=bench-gnns/<dataset>-<model> against graphdeeplearning/benchmarking-gnns@b6c407712fa576e9699555e1e035d1e327ccae6c:
configs/TUs_graph_classification_<model>_<dataset>_100k.json (params and net_params), main_TUs_graph_classification.py
(the last epoch tested) and data/TUs.py (DGL's LegacyTUDataset: the node attributes replace the labels), key by key."""

from __future__ import annotations

from typing import Any

import pytest

from tests.recipes._source import composed, deviation_keys, mismatches, undeclared

SOURCE_COMMIT = "b6c407712fa576e9699555e1e035d1e327ccae6c"
#: each config's params.init_lr and net_params.readout (GIN's neighbor_aggr_GIN sum, learn_eps_GIN true, n_mlp_GIN 2
#: with its MLP's batch norm, and gin_net.py's sum of a linear prediction per layer)
GIN: dict[str, Any] = {
    "model.pooling": "add",
    "model.layer.train_eps": True,
    "model.layer.mlp_batch_norm": True,
    "model.readout_layers": "all",
    "head.name": "linear",
}
CONFIGS: dict[tuple[str, str], dict[str, Any]] = {
    ("enzymes", "gcn"): {"optimizer.lr": 7e-4, "model.pooling": "mean"},
    ("enzymes", "gat"): {"optimizer.lr": 1e-3, "model.pooling": "mean", "model.layer.heads": 8},
    ("enzymes", "gin"): {"optimizer.lr": 7e-3, **GIN},
    ("enzymes", "gatedgcn"): {"optimizer.lr": 7e-4, "model.pooling": "mean"},
    ("enzymes", "mlp"): {"optimizer.lr": 1e-3, "model.pooling": "mean", "model.residual": False, "normalization.name": "none"},
    ("proteins", "gcn"): {"optimizer.lr": 7e-4, "model.pooling": "mean"},
    ("proteins", "gat"): {"optimizer.lr": 1e-3, "model.pooling": "mean", "model.layer.heads": 8},
    ("proteins", "gin"): {"optimizer.lr": 1e-4, **GIN},
    ("proteins", "gatedgcn"): {"optimizer.lr": 1e-4, "model.pooling": "mean"},
    ("proteins", "mlp"): {"optimizer.lr": 1e-4, "model.pooling": "mean", "model.residual": False, "normalization.name": "none"},
}
#: what every TU config shares: L 4, residual and batch_norm true (MLPNet: neither), dropouts 0, batch 20, epochs 1000,
#: weight decay 0, ReduceLROnPlateau(factor 0.5, patience 25), stop below min_lr 1e-6; the last epoch tested
SHARED: dict[str, Any] = {
    "model.num_layers": 4,
    "model.residual": True,
    "normalization.name": "batchnorm",
    "model.dropout": 0.0,
    "model.input_dropout": 0.0,
    "dataset.batch_size": 20,
    "trainer.max_epochs": 1000,
    "optimizer.name": "adam",
    "optimizer.weight_decay": 0.0,
    "scheduler.name": "plateau",
    "scheduler.factor": 0.5,
    "scheduler.patience": 25,
    "scheduler.min_lr": 1e-6,
    "task.checkpoint": "last",
    "dataset.use_node_attr": True,
    "dataset.source.use_node_labels": False,
}


def transcription(dataset: str, model: str) -> dict[str, Any]:
    return {**SHARED, **CONFIGS[(dataset, model)]}


@pytest.mark.parametrize(("dataset", "model"), list(CONFIGS))
def test_every_cell_is_its_sources_config_wherever_its_card_does_not_say_otherwise(dataset: str, model: str) -> None:
    cfg = composed(f"experiment=bench-gnns/{dataset}-{model}")
    assert (cfg.dataset.name, cfg.model.name) == (dataset, model)
    assert undeclared(cfg, transcription(dataset, model)) == []
    assert mismatches(cfg, transcription(dataset, model)) == []  # no transcribed key is left to the card
    assert SOURCE_COMMIT in cfg.recipe_card.source
    assert "model.hidden_dim" in deviation_keys(cfg)
    assert ("head" in deviation_keys(cfg)) == (model != "gin")  # GIN's readout is its source's
    assert ("dataset.tu_name" in deviation_keys(cfg)) == (dataset == "proteins")


@pytest.mark.parametrize(
    ("override", "problem"),
    [
        ("optimizer.lr=7e-4", "optimizer.lr: ours 0.0007, source 0.007"),
        ("model.pooling=mean", "model.pooling: ours 'mean', source 'add'"),
        ("scheduler.patience=10", "scheduler.patience: ours 10, source 25"),
        ("scheduler.min_lr=1e-5", "scheduler.min_lr: ours 1e-05, source 1e-06"),
        ("dataset.source.use_node_labels=true", "dataset.source.use_node_labels: ours True, source False"),
        ("task.checkpoint=best", "task.checkpoint: ours 'best', source 'last'"),
        ("model.readout_layers=last", "model.readout_layers: ours 'last', source 'all'"),
        ("model.layer.mlp_batch_norm=false", "model.layer.mlp_batch_norm: ours False, source True"),
        ("head=mlp2", "head.name: ours 'mlp2', source 'linear'"),
    ],
)
def test_changing_one_transcribed_key_fails_the_comparison(override: str, problem: str) -> None:
    cfg = composed("experiment=bench-gnns/enzymes-gin", override)
    assert undeclared(cfg, transcription("enzymes", "gin")) == [problem]


#: Xu et al. (2019), Section 4.1 and Table 1: GIN-0 fixes epsilon at 0 and sums, in the aggregation and the readout
GIN_0: dict[str, Any] = {"model.name": "gin", "model.layer.train_eps": False, "model.pooling": "add", "dataset.name": "mutag"}


def test_gin_mutag_runs_xu_et_al_gin_0() -> None:
    cfg = composed("experiment=gin-mutag/gin0")
    assert undeclared(cfg, GIN_0) == [] and mismatches(cfg, GIN_0) == []
    assert "Table 1" in cfg.recipe_card.source


@pytest.mark.parametrize(
    ("override", "problem"),
    [
        ("model.layer.train_eps=true", "model.layer.train_eps: ours True, source False"),
        ("model.pooling=mean", "model.pooling: ours 'mean', source 'add'"),
    ],
)
def test_a_learned_epsilon_or_a_mean_readout_is_not_gin_0(override: str, problem: str) -> None:
    assert mismatches(composed("experiment=gin-mutag/gin0", override), GIN_0) == [problem]
