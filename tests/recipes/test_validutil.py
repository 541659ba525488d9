"""task=validutil (and experiment=igb/validutil-ppnp) against THUDM/IGB@0731be2b8f72f02205fb884a83c27c6be88aea54:
valid_util_gene_labels.py (the baseline and tuning fits), validutil/final_scripts.sh with validutil/gcn.py's and
appnp.py's argparse defaults and validutil/train_eval.py (the final model), key by key on the composed config, and
the final GCN's structure against the source's model/gcn.py built from PyG's GCNConv."""

from __future__ import annotations

from typing import Any

import pytest
from omegaconf import DictConfig
from torch import nn
from torch_geometric.nn import GCNConv, MixHopConv

from graphbench.analysis.igb.fit import flatten, with_overrides
from graphbench.analysis.igb.validutil import final_config
from graphbench.build.model import network_builder
from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.modules.layers import GCNLayer
from graphbench.modules.network import count_parameters
from tests.recipes._source import composed, deviation_keys, mismatches

IGB_COMMIT = "0731be2b8f72f02205fb884a83c27c6be88aea54"
#: validutil/final_scripts.sh, one line per model and dataset (--lr, --hidden, --dropout, --weight_decay[, --K, --alpha])
FINAL_SCRIPTS: dict[tuple[str, str], dict[str, Any]] = {
    ("gcn", "cora"): {"optimizer.lr": 0.005, "model.hidden_dim": 32, "model.dropout": 0.1, "optimizer.weight_decay": 1e-4},
    ("gcn", "citeseer"): {"optimizer.lr": 0.01, "model.hidden_dim": 64, "model.dropout": 0.3, "optimizer.weight_decay": 1e-4},
    ("appnp", "cora"): {
        "optimizer.lr": 0.01,
        "model.hidden_dim": 64,
        "model.input_dropout": 0.6,
        "model.layer.dropout": 0.6,
        "optimizer.weight_decay": 1e-4,
        "model.layer.K": 8,
        "model.layer.alpha": 0.3,
    },
    ("appnp", "citeseer"): {
        "optimizer.lr": 0.01,
        "model.hidden_dim": 64,
        "model.input_dropout": 0.3,
        "model.layer.dropout": 0.3,
        "optimizer.weight_decay": 1e-4,
        "model.layer.K": 6,
        "model.layer.alpha": 0.3,
    },
}
#: what final_scripts.sh leaves to the scripts: --runs 10 (its flag), --epochs 200, --early_stopping 10,
#: --normalize_features True (gcn.py's and appnp.py's defaults); model/gcn.py: GCNConv -> ReLU -> Dropout -> GCNConv,
#: improved = (dataset == "CiteSeer"); PPNP_PYG: APPNP(K, alpha) without edge dropout, no dropout after propagation
FINAL_DEFAULTS: dict[str, dict[str, Any]] = {
    "gcn": {
        "trainer.max_epochs": 200,
        "dataset.normalize_features": True,
        "model.input_dropout": 0.0,
        "model.num_layers": 2,
        "model.encode_inputs": False,
        "model.last_layer_outputs": True,
        "model.residual": False,
        "normalization.name": "none",
    },
    "appnp": {
        "trainer.max_epochs": 200,
        "dataset.normalize_features": True,
        "model.dropout": 0.0,
        "model.layer.edge_dropout": 0.0,
    },
}
TASK = {"task.final.runs": 10, "task.final.patience": 10}
#: valid_util_gene_labels.py: train() defaults (lr 0.01, weight decay 5e-4, 200 iterations) for the baseline, the tuning
#: fits' train(lr=0.02, weight_decay=0, iters=400), both on Planetoid without a transform (raw features); its GCN:
#: hidden_channels=16, dropout=0, improved on CiteSeer
PHASES: dict[str, dict[str, Any]] = {
    "baseline": {"optimizer.lr": 0.01, "optimizer.weight_decay": 5e-4, "trainer.max_epochs": 200},
    "tuning": {"optimizer.lr": 0.02, "optimizer.weight_decay": 0.0, "trainer.max_epochs": 400},
}
PHASE_GCN = {"model.hidden_dim": 16, "model.dropout": 0.0, "model.input_dropout": 0.0, "dataset.normalize_features": False}
SHAPES = {"cora": (1433, 7), "citeseer": (3703, 6)}


def final_transcription(model: str, dataset: str) -> dict[str, Any]:
    improved = {"model.layer.improved": dataset == "citeseer"} if model == "gcn" else {}
    return {**FINAL_SCRIPTS[(model, dataset)], **FINAL_DEFAULTS[model], **improved}


def composed_task(model: str, dataset: str) -> DictConfig:
    if model == "appnp":
        return composed("experiment=igb/validutil-ppnp", f"dataset={dataset}")
    return composed("task=validutil", f"dataset={dataset}", f"model={model}")


@pytest.mark.parametrize(("model", "dataset"), list(FINAL_SCRIPTS))
def test_the_final_model_is_final_scripts_line_on_every_transcribed_key(model: str, dataset: str) -> None:
    cfg = composed_task(model, dataset)
    assert not cfg.task.grid  # graphbench's grid search is an option (task/grid=final_scripts), not the recipe
    assert mismatches(cfg, TASK) == []
    assert mismatches(final_config(cfg, cfg.task.every_phase, cfg.task.final), final_transcription(model, dataset)) == []
    assert IGB_COMMIT in cfg.recipe_card.source and deviation_keys(cfg) == ["task.tuning", "seed"]


@pytest.mark.parametrize("dataset", ["cora", "citeseer"])
def test_the_gcn_baseline_and_tuning_fits_are_valid_util_gene_labels(dataset: str) -> None:
    cfg = composed_task("gcn", dataset)
    common = flatten(cfg.task.every_phase.gcn.get(dataset))
    for phase, wanted in PHASES.items():
        phase_cfg = with_overrides(cfg, {**flatten(cfg.task[phase]), **common})  # as the task builds a phase's config
        assert mismatches(phase_cfg, {**wanted, **PHASE_GCN, "model.layer.improved": dataset == "citeseer"}) == []


def test_changing_one_transcribed_key_fails_the_comparison() -> None:
    cfg = composed("task=validutil", "dataset=cora", "model=gcn", "task.final.settings.gcn.cora.optimizer.lr=0.01")
    final = final_config(cfg, cfg.task.every_phase, cfg.task.final)
    assert mismatches(final, final_transcription("gcn", "cora")) == ["optimizer.lr: ours 0.01, source 0.005"]
    cfg = composed("task=validutil", "dataset=citeseer", "model=gcn", "task.every_phase.gcn.citeseer.model.layer.improved=false")
    final = final_config(cfg, cfg.task.every_phase, cfg.task.final)
    assert mismatches(final, final_transcription("gcn", "citeseer")) == ["model.layer.improved: ours False, source True"]


@pytest.mark.parametrize("dataset", ["cora", "citeseer"])
def test_the_final_gcn_is_the_sources_model(dataset: str) -> None:
    cfg = composed_task("gcn", dataset)
    final = final_config(cfg, cfg.task.every_phase, cfg.task.final)
    features, classes = SHAPES[dataset]
    info = DatasetInfo(dataset, "node", "multiclass", classes, "accuracy", True, FeatureSpec("dense", features), None)
    network = network_builder(final, info)(int(final.model.hidden_dim))
    hidden, improved = FINAL_SCRIPTS[("gcn", dataset)]["model.hidden_dim"], dataset == "citeseer"
    source = nn.ModuleList([GCNConv(features, hidden, improved=improved), GCNConv(hidden, classes, improved=improved)])
    assert count_parameters(network) == count_parameters(source)
    layers = [m for m in network.modules() if isinstance(m, GCNLayer)]
    assert [(m.conv.in_channels, m.conv.out_channels, m.conv.improved) for m in layers] == [
        (c.in_channels, c.out_channels, c.improved) for c in source
    ]
    assert not any(isinstance(m, (nn.BatchNorm1d, nn.LayerNorm)) for m in network.modules())
    assert type(network.act) is nn.ReLU and network.head is None
    # model/gcn.py: dropout only after the first convolution (its ReLU); none on the input features
    assert (network.input_dropout.p, network.dropout.p) == (0.0, FINAL_SCRIPTS[("gcn", dataset)]["model.dropout"])


#: validutil/final_scripts.sh's MixHop lines (--lr, --dropout, --weight_decay, --layer1_pows; graphbench's one width is
#: layer1's, declared in the card) with validutil/mixhop.py's defaults: --epochs 200, get_planetoid_dataset(name, False)
#: (raw features); model/mixhop.py: MixHop layers with ReLU and dropout after each, no input dropout, then nn.Linear
MIXHOP_FINAL: dict[str, dict[str, Any]] = {
    "cora": {"optimizer.lr": 1e-3, "model.dropout": 0.2, "optimizer.weight_decay": 5e-5, "model.hidden_dim": 3 * 200},
    "citeseer": {"optimizer.lr": 1e-3, "model.dropout": 0.8, "optimizer.weight_decay": 3e-3, "model.hidden_dim": 3 * 120},
}
MIXHOP_SHAPE = {
    "trainer.max_epochs": 200,
    "dataset.normalize_features": False,
    "model.input_dropout": 0.0,
    "model.num_layers": 2,
    "model.encode_inputs": False,
    "model.last_layer_outputs": False,
    "model.residual": False,
    "model.layer.powers": [0, 1, 2],
    "head.name": "linear",
    "normalization.name": "none",
}
#: valid_util_gene_labels.py: MixHop(dropout=0, layer1_pows=[160]*3, layer2_pows=[80]*3) for the baseline and tuning
MIXHOP_PHASE = {
    "model.hidden_dim": 3 * 160,
    "model.dropout": 0.0,
    "model.input_dropout": 0.0,
    "dataset.normalize_features": False,
}


@pytest.mark.parametrize("dataset", ["cora", "citeseer"])
def test_the_final_mixhop_is_final_scripts_line_and_its_probe_fits_valid_util_gene_labels(dataset: str) -> None:
    cfg = composed("experiment=igb/validutil-mixhop", f"dataset={dataset}")
    final = final_config(cfg, cfg.task.every_phase, cfg.task.final)
    assert mismatches(final, {**MIXHOP_FINAL[dataset], **MIXHOP_SHAPE}) == []
    common = flatten(cfg.task.every_phase.mixhop.get(dataset))
    for phase, wanted in PHASES.items():
        phase_cfg = with_overrides(cfg, {**flatten(cfg.task[phase]), **common})  # as the task builds a phase's config
        assert mismatches(phase_cfg, {**wanted, **MIXHOP_PHASE}) == []
    assert IGB_COMMIT in cfg.recipe_card.source
    assert deviation_keys(cfg) == ["model.hidden_dim", "model.layer", "task.final", "task.tuning", "seed"]


def test_changing_one_mixhop_transcription_fails_the_comparison() -> None:
    cfg = composed("experiment=igb/validutil-mixhop", "dataset=citeseer", "task.final.settings.mixhop.citeseer.model.dropout=0.5")
    final = final_config(cfg, cfg.task.every_phase, cfg.task.final)
    assert mismatches(final, {**MIXHOP_FINAL["citeseer"], **MIXHOP_SHAPE}) == ["model.dropout: ours 0.5, source 0.8"]


def test_the_final_mixhop_has_the_sources_layers_on_its_one_width() -> None:
    """model/mixhop.py on Cora at graphbench's one width (600): MixHop(1433 -> 3 x 200), MixHop(600 -> 3 x 200), Linear(600 -> 7)."""
    cfg = composed("experiment=igb/validutil-mixhop", "dataset=cora")
    final = final_config(cfg, cfg.task.every_phase, cfg.task.final)
    info = DatasetInfo("cora", "node", "multiclass", 7, "accuracy", True, FeatureSpec("dense", 1433), None)
    network = network_builder(final, info)(int(final.model.hidden_dim))
    convs = [m for m in network.modules() if isinstance(m, MixHopConv)]
    assert [(c.in_channels, c.out_channels, c.powers) for c in convs] == [(1433, 200, [0, 1, 2]), (600, 200, [0, 1, 2])]
    assert [(m.in_features, m.out_features) for m in network.modules() if isinstance(m, nn.Linear) and m.out_features == 7] == [
        (600, 7)
    ]
    assert (network.input_dropout.p, network.dropout.p) == (0.0, 0.2)
