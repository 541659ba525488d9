"""experiment=bench-gnns/csl-gcn[-lappe] against graphdeeplearning/benchmarking-gnns@b6c407712fa576e9699555e1e035d1e327ccae6c:
configs/CSL_graph_classification_GCN_CSL[_PE]_100k.json (params and net_params), data/CSL.py (positional_encoding:
eigenvectors 2..pos_enc_dim+1 of I - D^-1/2 A D^-1/2), train/train_CSL_graph_classification.py (one sign per eigenvector per
mini-batch) and main_CSL_graph_classification.py (the last epoch tested), key by key."""

from __future__ import annotations

from typing import Any

import pytest

from tests.recipes._source import composed, deviation_keys, mismatches, undeclared

SOURCE_COMMIT = "b6c407712fa576e9699555e1e035d1e327ccae6c"
#: what both CSL GCN configs set: L 4, residual and batch_norm true, dropouts 0, mean readout, batch 5, epochs 1000,
#: init_lr 5e-4, weight decay 0, ReduceLROnPlateau(factor 0.5, patience 5), stop below min_lr 1e-6; the last epoch tested
GCN_CSL: dict[str, Any] = {
    "dataset.name": "csl",
    "model.name": "gcn",
    "model.num_layers": 4,
    "model.residual": True,
    "model.pooling": "mean",
    "normalization.name": "batchnorm",
    "model.dropout": 0.0,
    "model.input_dropout": 0.0,
    "dataset.batch_size": 5,
    "trainer.max_epochs": 1000,
    "optimizer.name": "adam",
    "optimizer.lr": 5e-4,
    "optimizer.weight_decay": 0.0,
    "scheduler.name": "plateau",
    "scheduler.factor": 0.5,
    "scheduler.patience": 5,
    "scheduler.min_lr": 1e-6,
    "task.checkpoint": "last",
    "budget.max_params": 100_000,
}
#: pos_enc false: no PE
NO_PE: dict[str, Any] = {**GCN_CSL, "pe.name": "none"}
#: pos_enc true, pos_enc_dim 20: EigVec[:, 1:21] of L_sym through nn.Linear(20, hidden_dim), signs flipped per mini-batch
LAPPE: dict[str, Any] = {
    **GCN_CSL,
    "pe.name": "lappe",
    "pe.k": 20,
    "pe.laplacian": "sym",
    "pe.keep_trivial": False,
    "pe.encoder.kind": "linear",
    "pe.encoder.sign_flip": True,
    "pe.encoder.sign_flip_per": "batch",
}
CELLS: dict[str, dict[str, Any]] = {"csl-gcn": NO_PE, "csl-gcn-lappe": LAPPE}


@pytest.mark.parametrize("name", list(CELLS))
def test_each_csl_cell_is_its_sources_config_wherever_its_card_does_not_say_otherwise(name: str) -> None:
    cfg = composed(f"experiment=bench-gnns/{name}")
    assert undeclared(cfg, CELLS[name]) == []
    assert mismatches(cfg, CELLS[name]) == []  # no transcribed key is left to the card
    assert SOURCE_COMMIT in cfg.recipe_card.source
    assert {"model.hidden_dim", "head", "model.layer", "dataset.source"} <= set(deviation_keys(cfg))
    assert ("pe.concat_dim" in deviation_keys(cfg)) == (name == "csl-gcn-lappe")


@pytest.mark.parametrize(
    ("override", "problem"),
    [
        ("pe.k=8", "pe.k: ours 8, source 20"),
        ("pe.encoder.sign_flip_per=graph", "pe.encoder.sign_flip_per: ours 'graph', source 'batch'"),
        ("pe.keep_trivial=true", "pe.keep_trivial: ours True, source False"),
        ("optimizer.lr=1e-3", "optimizer.lr: ours 0.001, source 0.0005"),
        ("scheduler.patience=10", "scheduler.patience: ours 10, source 5"),
        ("dataset.batch_size=20", "dataset.batch_size: ours 20, source 5"),
        ("task.checkpoint=best", "task.checkpoint: ours 'best', source 'last'"),
    ],
)
def test_changing_one_transcribed_key_fails_the_comparison(override: str, problem: str) -> None:
    assert mismatches(composed("experiment=bench-gnns/csl-gcn-lappe", override), LAPPE) == [problem]


def test_the_cell_without_pe_builds_no_pe() -> None:
    assert mismatches(composed("experiment=bench-gnns/csl-gcn", "pe=lappe"), NO_PE) == ["pe.name: ours 'lappe', source 'none'"]
