"""The original LRGB recipes (experiment=lrgb/peptides-func-*) against vijaydwivedi75/lrgb@2410e9ee8d9309dd2120809d119a46092788eb89
configs/{GCN,GINE,GatedGCN}/peptides-func-*.yaml, and lrgb/peptides-func-gps against
rampasek/GraphGPS@28015707cbab7f8ad72bed0ee872d068ea59c94b configs/GPS/peptides-func-GPS.yaml: every key the source
sets equals the composed config's unless the recipe card declares it a deviation."""

from __future__ import annotations

from typing import Any

import pytest

from tests.recipes._source import composed, undeclared

#: train.batch_size 128, gnn.layers_mp 5, layers_post_mp 1, dropout 0, act relu, graph_pooling mean; optim: base_lr 1e-3,
#: weight_decay 0, max_epoch 500, reduce_on_plateau factor 0.5, patience 20, min_lr 1e-5; no positional encoding
LRGB_COMMON: dict[str, Any] = {
    "dataset.batch_size": 128,
    "model.num_layers": 5,
    "head.num_layers": 1,
    "model.dropout": 0.0,
    "model.activation": "relu",
    "model.pooling": "mean",
    "optimizer.lr": 0.001,
    "optimizer.weight_decay": 0.0,
    "scheduler.name": "plateau",
    "scheduler.factor": 0.5,
    "scheduler.patience": 20,
    "scheduler.min_lr": 1.0e-5,
    "trainer.max_epochs": 500,
    "pe.name": "none",
}
SOURCES: dict[str, dict[str, Any]] = {
    # GCN: dim_inner 300, batchnorm True, stage_type stack (no skip connections)
    "gcn": {**LRGB_COMMON, "model.hidden_dim": 300, "normalization.name": "batchnorm", "model.residual": False},
    # GINE: dim_inner 208, residual True, GINEConvLayer without a norm
    "gine": {**LRGB_COMMON, "model.hidden_dim": 208, "normalization.name": "none", "model.residual": True},
    # GatedGCN: dim_inner 138, residual True, the layer's batch norms
    "gatedgcn": {**LRGB_COMMON, "model.hidden_dim": 138, "normalization.name": "batchnorm", "model.residual": True},
    # GPS: CustomGatedGCN+Transformer, 4 layers, 4 heads, dim 96, dropout 0, attn_dropout 0.5, batch norm, LapPE;
    # adamW lr 3e-4, weight decay 0, 200 epochs, batch 128, mean pooling, layers_post_mp 1
    "gps": {
        "dataset.batch_size": 128,
        "model.layer.local": "gatedgcn",
        "model.num_layers": 4,
        "model.layer.heads": 4,
        "model.hidden_dim": 96,
        "model.dropout": 0.0,
        "model.layer.attn_dropout": 0.5,
        "normalization.name": "batchnorm",
        "pe.name": "lappe",
        "optimizer.lr": 0.0003,
        "optimizer.weight_decay": 0.0,
        "trainer.max_epochs": 200,
        "model.pooling": "mean",
        "head.num_layers": 1,
    },
}


@pytest.mark.parametrize("model", list(SOURCES))
def test_the_recipe_is_its_source_config_wherever_its_card_does_not_say_otherwise(model: str) -> None:
    assert undeclared(composed(f"experiment=lrgb/peptides-func-{model}"), SOURCES[model]) == []


def test_changing_one_transcribed_key_fails_the_comparison() -> None:
    cfg = composed("experiment=lrgb/peptides-func-gatedgcn", "scheduler.patience=10")
    assert undeclared(cfg, SOURCES["gatedgcn"]) == ["scheduler.patience: ours 10, source 20"]
