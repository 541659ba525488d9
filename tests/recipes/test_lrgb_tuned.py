"""experiment=lrgb-tuned/* against toenshoff/LRGB@c3500cb702dcc5bdbe02783b94f24eebb7fb52c9: every key of
configs/LRGB-tuned/{peptides-func,peptides-struct,pcqm-contact,vocsuperpixels,coco}-{GCN,GINE,GatedGCN}.yaml and
peptides-func-GPS.yaml, transcribed as the files set it and mapped to graphbench's keys, and the built network
against the source's model rebuilt here from PyG modules after graphgps/network/custom_gnn.py,
graphgps/layer/{gcn_conv,gine_conv,gatedgcn,gps}_layer.py, graphgps/head/{mlp_graph,inductive_node,
inductive_edge}.py and graphgps/encoder/{kernel_pos,laplace_pos,voc_superpixels}_encoder.py: the parameter
count, the norm layers, and the activations and dropouts a forward pass calls."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch
from ogb.graphproppred.mol_encoder import AtomEncoder, BondEncoder
from omegaconf import DictConfig, OmegaConf
from torch import Tensor, nn
from torch.nn import functional as F
from torch_geometric.data import Batch, Data
from torch_geometric.nn import GCNConv, GINEConv, global_mean_pool
from torch_geometric.nn import Linear as PygLinear
from torch_geometric.utils import scatter, to_dense_batch

from graphbench.build.model import network_builder
from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.modules.heads import L2Normalize, score_pairs
from graphbench.modules.network import count_parameters
from tests.recipes._source import composed, deviation_keys, mismatches

LRGB_COMMIT = "c3500cb702dcc5bdbe02783b94f24eebb7fb52c9"
SOURCE_FILE = {"pascalvoc-sp": "vocsuperpixels", "coco-sp": "coco"}
SOURCE_MODEL = {"gcn": "GCN", "gine": "GINE", "gatedgcn": "GatedGCN", "gps": "GPS"}

# -- the transcription: every key the source's YAML files set, as they set it -----------------------------------


def _posenc(lappe: bool, rwse: bool) -> dict[str, Any]:
    """The posenc_LapPE / posenc_RWSE blocks, the same in every LRGB-tuned file but for ``enable``."""
    return {
        "posenc_LapPE.enable": lappe,
        "posenc_LapPE.eigen.laplacian_norm": "none",
        "posenc_LapPE.eigen.eigvec_norm": "L2",
        "posenc_LapPE.eigen.max_freqs": 10,
        "posenc_LapPE.model": "DeepSet",
        "posenc_LapPE.dim_pe": 16,
        "posenc_LapPE.layers": 2,
        "posenc_LapPE.raw_norm_type": "none",
        "posenc_RWSE.enable": rwse,
        "posenc_RWSE.kernel.times_func": "range(1,21)",
        "posenc_RWSE.model": "Linear",
        "posenc_RWSE.dim_pe": 28,
        "posenc_RWSE.raw_norm_type": "BatchNorm",
    }


def _common(project: str, metric: str, batch: int, max_epoch: int, warmup: int, clip: bool) -> dict[str, Any]:
    return {
        "out_dir": "results",
        "metric_best": metric,
        **({"metric_agg": "argmin"} if metric == "mae" else {}),
        "wandb.use": True,
        "wandb.project": project,
        "train.mode": "custom",
        "train.batch_size": batch,
        "train.eval_period": 1,
        "train.ckpt_period": 100,
        **({"optim.clip_grad_norm": True} if clip else {}),
        "optim.optimizer": "adamW",
        "optim.weight_decay": 0.0,
        "optim.base_lr": 0.001,
        "optim.max_epoch": max_epoch,
        "optim.scheduler": "cosine_with_warmup",
        "optim.num_warmup_epochs": warmup,
    }


def _molecules(name: str, task_type: str, node_encoder: str, edge_task: bool = False) -> dict[str, Any]:
    return {
        "dataset.format": "OGB",
        "dataset.name": name,
        "dataset.task": "graph",
        "dataset.task_type": task_type,
        **({"dataset.resample_negative": True} if edge_task else {}),
        "dataset.transductive": False,
        "dataset.node_encoder": True,
        "dataset.node_encoder_name": node_encoder,
        "dataset.node_encoder_bn": False,
        "dataset.edge_encoder": True,
        "dataset.edge_encoder_name": "Bond",
        "dataset.edge_encoder_bn": False,
    }


def _superpixels(kind: str, node_encoder: str) -> dict[str, Any]:
    return {
        "dataset.format": f"PyG-{kind}Superpixels",
        "dataset.name": "edge_wt_region_boundary",
        "dataset.slic_compactness": 30,
        "dataset.task": "graph",
        "dataset.task_type": "classification",
        "dataset.transductive": False,
        "dataset.node_encoder": True,
        "dataset.node_encoder_name": node_encoder,
        "dataset.node_encoder_bn": False,
        "dataset.edge_encoder": True,
        "dataset.edge_encoder_name": f"{kind}Edge",
        "dataset.edge_encoder_bn": False,
        "train.eval_smoothing_metrics": True,
    }


def _gnn(head: str, layers: int, post: int, dim: int, layer: str, dropout: float, **extra: Any) -> dict[str, Any]:
    return {
        "model.type": "custom_gnn",
        "gnn.head": head,
        "gnn.layers_pre_mp": 0,
        "gnn.layers_mp": layers,
        "gnn.layers_post_mp": post,
        "gnn.dim_inner": dim,
        "gnn.layer_type": layer,
        "gnn.act": "gelu",
        "gnn.residual": True,
        "gnn.dropout": dropout,
        **{f"gnn.{k}": v for k, v in extra.items()},
    }


def _peptides_func(layers: int, dim: int, layer: str) -> dict[str, Any]:
    return {
        **_common("peptides-func", "ap", 200, 250, 5, True),
        **_molecules("peptides-functional", "classification_multilabel", "Atom+RWSE"),
        **_posenc(False, True),
        "model.loss_fun": "cross_entropy",
        "model.graph_pooling": "mean",
        **_gnn("mlp_graph", layers, 3, dim, layer, 0.1),
    }


def _peptides_struct(layers: int, dim: int, layer: str, smoothing: bool = False) -> dict[str, Any]:
    return {
        **_common("peptides-struct", "mae", 200, 250, 5, True),
        **_molecules("peptides-structural", "regression", "Atom+LapPE"),
        **_posenc(True, False),
        **({"train.eval_smoothing_metrics": True} if smoothing else {}),
        "model.loss_fun": "l1",
        "model.graph_pooling": "mean",
        **_gnn("mlp_graph", layers, 3, dim, layer, 0.1),
    }


def _pcqm_contact(dim: int, layer: str) -> dict[str, Any]:
    return {
        **_common("pcqm4m-contact", "mrr", 500, 150, 5, True),
        "num_workers": 16,
        **_molecules("PCQM4Mv2Contact-shuffle", "classification", "Atom+LapPE", edge_task=True),
        **_posenc(True, False),
        "train.eval_smoothing_metrics": True,
        "model.loss_fun": "cross_entropy",
        "model.edge_decoding": "dot",
        **_gnn("inductive_edge", 8, 1, dim, layer, 0.1, batchnorm=False),
    }


def _superpixel_task(kind: str, node_encoder: str, gnn: dict[str, Any]) -> dict[str, Any]:
    return {
        **_common("Pascal" if kind == "VOC" else "COCO", "f1", 50, 200, 10, False),
        **_superpixels(kind, node_encoder),
        **_posenc(False, node_encoder.endswith("+RWSE")),
        "model.loss_fun": "weighted_cross_entropy",
        **gnn,
    }


SOURCE: dict[str, dict[str, Any]] = {
    "peptides-func-gcn": _peptides_func(6, 235, "gcnconv"),
    "peptides-func-gine": _peptides_func(8, 160, "gineconv"),
    "peptides-func-gatedgcn": _peptides_func(10, 95, "gatedgcnconv"),
    "peptides-struct-gcn": _peptides_struct(6, 235, "gcnconv"),
    "peptides-struct-gine": _peptides_struct(10, 145, "gineconv"),
    "peptides-struct-gatedgcn": _peptides_struct(8, 100, "gatedgcnconv", smoothing=True),
    "pcqm-contact-gcn": _pcqm_contact(215, "gcnconv"),
    "pcqm-contact-gine": _pcqm_contact(160, "gineconv"),
    "pcqm-contact-gatedgcn": _pcqm_contact(105, "gatedgcnconv"),
    "pascalvoc-sp-gcn": _superpixel_task("VOC", "VOCNode+RWSE", _gnn("inductive_node", 10, 3, 200, "gcnconv", 0.0)),
    "pascalvoc-sp-gine": _superpixel_task("VOC", "VOCNode", _gnn("inductive_node", 10, 2, 145, "gineconv", 0.2)),
    "pascalvoc-sp-gatedgcn": _superpixel_task("VOC", "VOCNode", _gnn("inductive_node", 10, 2, 95, "gatedgcnconv", 0.2)),
    "coco-sp-gcn": _superpixel_task("COCO", "COCONode", _gnn("inductive_node", 6, 1, 235, "gcnconv", 0.1, batchnorm=False)),
    "coco-sp-gine": _superpixel_task("COCO", "COCONode", _gnn("inductive_node", 6, 1, 180, "gineconv", 0.1, batchnorm=False)),
    "coco-sp-gatedgcn": _superpixel_task("COCO", "COCONode", _gnn("inductive_node", 6, 1, 120, "gatedgcnconv", 0.1)),
    "peptides-func-gps": {
        **_common("peptides-func", "ap", 200, 250, 5, True),
        **_molecules("peptides-functional", "classification_multilabel", "Atom+LapPE"),
        **_posenc(True, False),
        "model.type": "GPSModel",
        "model.loss_fun": "cross_entropy",
        "model.graph_pooling": "mean",
        "gt.layer_type": "CustomGatedGCN+Transformer",
        "gt.layers": 6,
        "gt.n_heads": 4,
        "gt.dim_hidden": 76,
        "gt.dropout": 0.1,
        "gt.attn_dropout": 0.5,
        "gt.layer_norm": False,
        "gt.batch_norm": True,
        "gnn.head": "mlp_graph",
        "gnn.layers_pre_mp": 0,
        "gnn.layers_post_mp": 2,
        "gnn.dim_inner": 76,
        "gnn.batchnorm": True,
        "gnn.act": "gelu",
        "gnn.dropout": 0.1,
        "gnn.agg": "mean",
        "gnn.normalize_adj": False,
    },
}
RECIPES = sorted(SOURCE)

# -- the source's keys in graphbench's terms ----------------------------------------------------------------------

#: source keys that configure nothing graphbench runs, each with the reason
NOT_A_MODEL_OR_TRAINING_SETTING: dict[str, str] = {
    "out_dir": "output folder",
    "wandb.use": "logging",
    "wandb.project": "logging",
    "num_workers": "data-loading processes",
    "train.mode": "GraphGPS's training-loop switch",
    "train.ckpt_period": "checkpoint cadence",
    "train.eval_smoothing_metrics": "GraphGPS's logging of smoothed metrics; the best epoch is chosen on the raw ones",
    "dataset.task": "GraphGym's loader level; graphbench's dataset YAML sets it (graph/node/link)",
    "dataset.transductive": "GraphGym's loader switch; every LRGB dataset is inductive",
    "dataset.format": "GraphGym's loader name; the dataset YAML names its source",
    "dataset.node_encoder": "encoders are always built (the structure test checks them)",
    "dataset.edge_encoder_name": "the dataset's edge feature kind (the structure test checks the encoder)",
    "gnn.batchnorm": "read only by GraphGym's GeneralLayer, which custom_gnn and GPSModel do not build",
    "gnn.agg": "read only by GraphGym's GeneralLayer, which GPSModel does not build",
    "gnn.normalize_adj": "read only by GraphGym's GeneralLayer, which GPSModel does not build",
    "posenc_LapPE.eigen.eigvec_norm": "L2: LAPACK's eigenvectors are unit vectors",
}
#: the settings of a disabled posenc block configure nothing
POSENC_SETTINGS = ("eigen.laplacian_norm", "eigen.max_freqs", "model", "dim_pe", "layers", "raw_norm_type", "kernel.times_func")

DATASETS = {
    "peptides-functional": "peptides-func",
    "peptides-structural": "peptides-struct",
    "PCQM4Mv2Contact-shuffle": "pcqm-contact",
    "PyG-VOCSuperpixels": "pascalvoc-sp",
    "PyG-COCOSuperpixels": "coco-sp",
}
LAYERS = {"gcnconv": "gcn", "gineconv": "gine", "gatedgcnconv": "gatedgcn"}


def graphbench_keys(source: dict[str, Any]) -> dict[str, Any]:
    """The graphbench keys and values that express ``source`` (a transcription); a source key that is not
    handled here or named in :data:`NOT_A_MODEL_OR_TRAINING_SETTING` raises ``KeyError``."""
    src = dict(source)
    out: dict[str, Any] = {}
    dataset = DATASETS[src["dataset.name"] if src["dataset.format"] == "OGB" else src["dataset.format"]]
    gps = src["model.type"] == "GPSModel"
    layer = "gps" if gps else LAYERS[src["gnn.layer_type"]]
    head = src["gnn.head"]
    handled = set(NOT_A_MODEL_OR_TRAINING_SETTING)
    for block in ("posenc_LapPE", "posenc_RWSE"):
        if not src[f"{block}.enable"]:
            handled |= {f"{block}.{key}" for key in POSENC_SETTINGS}

    def put(source_key: str, **values: Any) -> None:
        """``source_key``, when the source sets it, is expressed by ``values`` (``a__b`` for ``a.b``)."""
        if source_key not in src:
            return
        handled.add(source_key)
        out.update({key.replace("__", "."): value for key, value in values.items()})

    put("dataset.name", dataset__name=dataset)
    # LRGB's published superpixel files are the edge_wt_region_boundary graphs of SLIC compactness 30
    put("dataset.slic_compactness", dataset__lrgb_name=dataset)
    metric = {"ap": "ap", "mae": "mae", "f1": "f1_macro", "mrr": "mrr"}[src["metric_best"]]
    put("metric_best", dataset__metric=metric)
    # metric_agg: GraphGPS's default argmax, argmin for the MAE
    out["dataset.higher_is_better"] = src.get("metric_agg", "argmax") == "argmax"
    handled.add("metric_agg")
    task = {"classification_multilabel": "multilabel", "regression": "regression"}.get(src["dataset.task_type"])
    put("dataset.task_type", dataset__task_type=task or ("binary" if dataset == "pcqm-contact" else "multiclass"))
    put("dataset.resample_negative", dataset__module__protocol="ranking", dataset__module__num_negatives=2)
    loss = {
        "l1": "torch.nn.L1Loss",
        "weighted_cross_entropy": "graphbench.modules.losses.BatchWeightedCrossEntropyLoss",
        # binary cross_entropy on PCQM-Contact: GraphGym's BCEWithLogitsLoss over the labelled pairs
        "cross_entropy": "graphbench.modules.losses.MaskedBCEWithLogitsLoss"
        if task == "multilabel"
        else "torch.nn.BCEWithLogitsLoss",
    }[src["model.loss_fun"]]
    put("model.loss_fun", **{"dataset.module.loss._target_": loss})
    node_encoder = src["dataset.node_encoder_name"]
    pe = "lappe" if node_encoder.endswith("+LapPE") else "rwse" if node_encoder.endswith("+RWSE") else "none"
    put("dataset.node_encoder_name", pe__name=pe)
    put("dataset.node_encoder_bn")  # no norm after the encoders: the structure test counts the norms
    put("dataset.edge_encoder_bn")
    # True: built whatever the layers read (GCNConv reads none); model.edge_encoder=auto would leave it out
    put("dataset.edge_encoder", model__edge_encoder="always" if src["dataset.edge_encoder"] else "auto")
    put("posenc_LapPE.enable")
    put("posenc_RWSE.enable")
    if pe == "lappe":
        put("posenc_LapPE.eigen.laplacian_norm", pe__laplacian="combinatorial")
        put("posenc_LapPE.eigen.max_freqs", pe__k=src["posenc_LapPE.eigen.max_freqs"], pe__keep_trivial=True)
        # DeepSet, with LapPENodeEncoder's random sign per eigenvector per mini-batch in training
        put("posenc_LapPE.model", pe__encoder__kind="deepset", pe__encoder__sign_flip=True, pe__encoder__sign_flip_per="batch")
        put("posenc_LapPE.dim_pe", pe__concat_dim=src["posenc_LapPE.dim_pe"])
        put("posenc_LapPE.layers")  # phi's two Linear maps: the structure test counts them
        put("posenc_LapPE.raw_norm_type")  # none: no norm in the PE encoder (the structure test)
    if pe == "rwse":
        put("posenc_RWSE.kernel.times_func", pe__k=20)
        put("posenc_RWSE.model")  # one Linear map (the structure test)
        put("posenc_RWSE.dim_pe", pe__concat_dim=src["posenc_RWSE.dim_pe"])
        put("posenc_RWSE.raw_norm_type")  # BatchNorm1d over the 20 steps (the structure test)
    put("train.batch_size", dataset__batch_size=src["train.batch_size"])
    put("train.eval_period", trainer__check_val_every_n_epoch=1)
    # clip_grad_norm: GraphGPS clips the gradient norm to optim.clip_grad_norm_value, default 1.0
    out["trainer.gradient_clip_val"] = 1.0 if src.get("optim.clip_grad_norm") else None
    handled.add("optim.clip_grad_norm")
    put("optim.optimizer", optimizer__name="adamw")
    put("optim.weight_decay", optimizer__weight_decay=src["optim.weight_decay"])
    put("optim.base_lr", optimizer__lr=src["optim.base_lr"])
    put("optim.max_epoch", trainer__max_epochs=src["optim.max_epoch"], scheduler__max_epochs=src["optim.max_epoch"])
    put("optim.scheduler", scheduler__name="cosine")
    put("optim.num_warmup_epochs", scheduler__warmup_epochs=src["optim.num_warmup_epochs"])
    put("model.type", model__name=layer, budget__max_params=None)
    if "model.graph_pooling" in src:
        put("model.graph_pooling", model__pooling=src["model.graph_pooling"])
    if "model.edge_decoding" in src:
        put("model.edge_decoding", head__name="dot")
    put("gnn.layers_pre_mp")  # 0: no pre-MP layers (the structure test)
    put("gnn.dim_inner", model__hidden_dim=src["gnn.dim_inner"])
    put("gnn.layers_post_mp", head__num_layers=src["gnn.layers_post_mp"])
    dropout = src["gt.dropout"] if gps else src["gnn.dropout"]
    if head == "mlp_graph":  # Dropout before every Linear, cfg.gnn.act between them
        put("gnn.head", head__dropout_first=True, head__activation=src["gnn.act"], head__dropout=src["gnn.dropout"])
    elif head == "inductive_node":  # GraphGym's MLP with a fresh LayerConfig: ReLU, L2 normalization, no dropout
        put("gnn.head", head__l2_normalize=True, head__activation="relu", head__dropout=0.0)
    else:  # inductive_edge: GraphGym's MLP to dim_inner on every node, then the dot product of the pair
        put("gnn.head", head__name="dot", head__l2_normalize=True, head__activation="relu")
    if gps:
        put("gt.layer_type", model__layer__local="gatedgcn")
        put("gt.layers", model__num_layers=src["gt.layers"])
        put("gt.n_heads", model__layer__heads=src["gt.n_heads"])
        put("gt.dim_hidden", model__hidden_dim=src["gt.dim_hidden"])
        put("gt.dropout", model__dropout=dropout, model__layer__dropout=dropout)
        put("gt.attn_dropout", model__layer__attn_dropout=src["gt.attn_dropout"])
        put("gt.layer_norm")
        put("gt.batch_norm", normalization__kind="batchnorm", model__layer__norm="batchnorm")
        put("gnn.act", model__activation=src["gnn.act"], model__layer__activation=src["gnn.act"])
        put("gnn.dropout")
        return _checked(out, src, handled)
    put("gnn.layers_mp", model__num_layers=src["gnn.layers_mp"])
    put("gnn.residual", model__residual=src["gnn.residual"])
    put("gnn.dropout", model__dropout=dropout)
    put("gnn.layer_type", model__name=layer)
    if layer == "gcn":  # GCNConvLayer: conv -> act -> dropout -> residual
        put("gnn.act", model__activation=src["gnn.act"], normalization__kind="none", model__layer__improved=False)
    elif layer == "gine":  # GINEConvLayer: GINEConv(Linear act Dropout Linear Dropout), eps 0 -> residual
        put(
            "gnn.act",
            model__block="residual",
            normalization__kind="none",
            model__layer__train_eps=False,
            model__layer__mlp_activation=src["gnn.act"],
            model__layer__mlp_dropout=dropout,
        )
    else:  # custom_gnn builds GatedGCNLayer without act: its default 'relu', BatchNorm on nodes and edges
        put("gnn.act", model__activation="relu", normalization__kind="batchnorm")
    return _checked(out, src, handled)


def _checked(out: dict[str, Any], source: dict[str, Any], handled: set[str]) -> dict[str, Any]:
    missing = sorted(set(source) - handled)
    if missing:
        raise KeyError(f"source keys without a graphbench counterpart or a reason: {missing}")
    return out


def recipe_config(recipe: str, *overrides: str) -> DictConfig:
    cfg = composed(f"experiment=lrgb-tuned/{recipe}", *overrides)
    OmegaConf.resolve(cfg)
    return cfg


@pytest.mark.parametrize("recipe", RECIPES)
def test_the_recipe_is_the_source_config_on_every_key(recipe: str) -> None:
    cfg = recipe_config(recipe)
    assert mismatches(cfg, graphbench_keys(SOURCE[recipe])) == []
    dataset, model = recipe.rsplit("-", 1)
    source_file = f"configs/LRGB-tuned/{SOURCE_FILE.get(dataset, dataset)}-{SOURCE_MODEL[model]}.yaml"
    assert cfg.recipe_card.source.startswith(f"toenshoff/LRGB@{LRGB_COMMIT} {source_file};")
    # every deviation in the card's schema, the effect measured or null
    for deviation in cfg.recipe_card.deviations:
        assert set(deviation) == {"key", "source", "ours", "why", "effect"} and deviation.why
    assert len(set(deviation_keys(cfg))) == len(cfg.recipe_card.deviations)


def test_changing_one_transcribed_key_fails_the_comparison() -> None:
    cfg = recipe_config("peptides-func-gcn")
    wider = {**SOURCE["peptides-func-gcn"], "gnn.dim_inner": 236}
    assert mismatches(cfg, graphbench_keys(wider)) == ["model.hidden_dim: ours 235, source 236"]
    normed = recipe_config("peptides-func-gcn", "normalization=batchnorm")
    assert mismatches(normed, graphbench_keys(SOURCE["peptides-func-gcn"])) == [
        "normalization.kind: ours 'batchnorm', source 'none'"
    ]
    with pytest.raises(KeyError, match=r"gnn\.new_key"):
        graphbench_keys({**SOURCE["peptides-func-gcn"], "gnn.new_key": 1})


# -- the source's network, rebuilt from PyG modules ----------------------------------------------------------------

#: the datasets' facts (graphbench.data.sources: LRGB's files) that size the encoders and the output layer
INFO: dict[str, DatasetInfo] = {
    "peptides-func": DatasetInfo(
        "peptides-func", "graph", "multilabel", 10, "ap", True, FeatureSpec("atom"), FeatureSpec("bond")
    ),
    "peptides-struct": DatasetInfo(
        "peptides-struct", "graph", "regression", 11, "mae", False, FeatureSpec("atom"), FeatureSpec("bond")
    ),
    "pcqm-contact": DatasetInfo("pcqm-contact", "link", "binary", 1, "mrr", True, FeatureSpec("atom"), FeatureSpec("bond")),
    "pascalvoc-sp": DatasetInfo(
        "pascalvoc-sp", "node", "multiclass", 21, "f1_macro", True, FeatureSpec("dense", 14), FeatureSpec("dense", 2)
    ),
    "coco-sp": DatasetInfo(
        "coco-sp", "node", "multiclass", 81, "f1_macro", True, FeatureSpec("dense", 14), FeatureSpec("dense", 2)
    ),
}
ACTIVATIONS = {"gelu": nn.GELU, "relu": nn.ReLU}


class SourceL2Norm(nn.Module):
    """GraphGym's ``has_l2norm``: ``F.normalize(x, p=2, dim=1)`` after a hidden layer of its MLP."""

    def forward(self, x: Tensor) -> Tensor:
        return F.normalize(x, p=2.0, dim=1)


class SourceGatedGCN(nn.Module):
    """graphgps/layer/gatedgcn_layer.py ``GatedGCNLayer``: A..E, BatchNorm and ``act`` on nodes and edges,
    dropout (``F.dropout`` there, modules here so that a forward's calls are counted), the node residual when
    ``residual`` and always the edge one."""

    def __init__(self, dim: int, dropout: float, residual: bool, act: str) -> None:
        super().__init__()
        self.A, self.B, self.C, self.D, self.E = (PygLinear(dim, dim, bias=True) for _ in range(5))
        self.bn_node_x, self.bn_edge_e = nn.BatchNorm1d(dim), nn.BatchNorm1d(dim)
        self.act_fn_x, self.act_fn_e = ACTIVATIONS[act](), ACTIVATIONS[act]()
        self.drop_x, self.drop_e = nn.Dropout(dropout), nn.Dropout(dropout)
        self.residual = residual

    def forward(self, x: Tensor, e: Tensor, edge_index: Tensor) -> tuple[Tensor, Tensor]:
        src, dst = edge_index  # x_j: the source node, x_i: the receiving one
        e_ij = self.D(x)[dst] + self.E(x)[src] + self.C(e)
        sigma = torch.sigmoid(e_ij)
        num = scatter(sigma * self.B(x)[src], dst, 0, dim_size=x.size(0), reduce="sum")
        den = scatter(sigma, dst, 0, dim_size=x.size(0), reduce="sum")
        h = self.drop_x(self.act_fn_x(self.bn_node_x(self.A(x) + num / (den + 1e-6))))
        e_new = self.drop_e(self.act_fn_e(self.bn_edge_e(e_ij)))
        return (x + h if self.residual else h), e + e_new


class SourceLayer(nn.Module):
    """One layer of custom_gnn: GCNConvLayer, GINEConvLayer or GatedGCNLayer (act: its default 'relu')."""

    def __init__(self, kind: str, dim: int, dropout: float, act: str) -> None:
        super().__init__()
        self.kind = kind
        if kind == "gcn":
            self.model: nn.Module = GCNConv(dim, dim, bias=True)
            self.act = nn.Sequential(ACTIVATIONS[act](), nn.Dropout(dropout))
        elif kind == "gine":
            mlp = nn.Sequential(
                PygLinear(dim, dim), ACTIVATIONS[act](), nn.Dropout(dropout), PygLinear(dim, dim), nn.Dropout(dropout)
            )
            self.model = GINEConv(mlp)
        else:
            self.model = SourceGatedGCN(dim, dropout, residual=True, act="relu")

    def forward(self, x: Tensor, e: Tensor, edge_index: Tensor) -> tuple[Tensor, Tensor]:
        if self.kind == "gcn":
            return x + self.act(self.model(x, edge_index)), e
        if self.kind == "gine":
            return x + self.model(x, edge_index, e), e
        return self.model(x, e, edge_index)


class SourceGPSLayer(nn.Module):
    """graphgps/layer/gps_layer.py ``GPSLayer`` with CustomGatedGCN (residual False) and Transformer, BatchNorm."""

    def __init__(self, dim: int, heads: int, dropout: float, attn_dropout: float, act: str) -> None:
        super().__init__()
        self.local_model = SourceGatedGCN(dim, dropout, residual=False, act=act)
        self.self_attn = nn.MultiheadAttention(dim, heads, dropout=attn_dropout, batch_first=True)
        self.norm1_local, self.norm1_global, self.norm2 = nn.BatchNorm1d(dim), nn.BatchNorm1d(dim), nn.BatchNorm1d(dim)
        self.dropout_global = nn.Dropout(dropout)
        self.ff = nn.Sequential(
            nn.Linear(dim, 2 * dim), ACTIVATIONS[act](), nn.Dropout(dropout), nn.Linear(2 * dim, dim), nn.Dropout(dropout)
        )

    def forward(self, x: Tensor, e: Tensor, edge_index: Tensor, batch: Tensor) -> tuple[Tensor, Tensor]:
        h_local, e = self.local_model(x, e, edge_index)
        h_local = self.norm1_local(h_local + x)
        dense, mask = to_dense_batch(x, batch)
        h_global = self.self_attn(dense, dense, dense, key_padding_mask=~mask, need_weights=False)[0][mask]
        h_global = self.norm1_global(self.dropout_global(h_global) + x)
        h = h_local + h_global
        return self.norm2(h + self.ff(h)), e


class SourceNetwork(nn.Module):
    """custom_gnn (or GPSModel): FeatureEncoder (dataset encoder of width dim_inner - dim_pe, then the PE
    encoder's dim_pe channels concatenated; the edge encoder at dim_inner), the layers, the head."""

    def __init__(self, source: dict[str, Any], info: DatasetInfo) -> None:
        super().__init__()
        gps = source["model.type"] == "GPSModel"
        dim = source["gnn.dim_inner"]
        self.pe = "lappe" if source["posenc_LapPE.enable"] else "rwse" if source["posenc_RWSE.enable"] else "none"
        dim_pe = {"lappe": source["posenc_LapPE.dim_pe"], "rwse": source["posenc_RWSE.dim_pe"], "none": 0}[self.pe]
        atoms = info.node_features.kind == "atom"
        self.node_encoder = AtomEncoder(dim - dim_pe) if atoms else nn.Linear(14, dim - dim_pe)  # VOCNodeEncoder
        if self.pe == "rwse":  # KernelPENodeEncoder: raw_norm BatchNorm1d(20), pe_encoder Linear(20, 28)
            self.raw_norm, self.pe_encoder = nn.BatchNorm1d(20), nn.Linear(20, dim_pe)
        elif self.pe == "lappe":  # LapPENodeEncoder, DeepSet of 2 layers: linear_A (2 -> 2 dim_pe), ReLU, Linear, ReLU
            self.linear_A = nn.Linear(2, 2 * dim_pe)
            self.pe_encoder = nn.Sequential(nn.ReLU(), nn.Linear(2 * dim_pe, dim_pe), nn.ReLU())
        self.edge_encoder = BondEncoder(dim) if atoms else nn.Linear(2, dim)  # VOCEdgeEncoder: 2 channels
        act = source["gnn.act"]
        if gps:
            self.layers = nn.ModuleList(
                SourceGPSLayer(dim, source["gt.n_heads"], source["gt.dropout"], source["gt.attn_dropout"], act)
                for _ in range(source["gt.layers"])
            )
        else:
            kind = LAYERS[source["gnn.layer_type"]]
            self.layers = nn.ModuleList(
                SourceLayer(kind, dim, source["gnn.dropout"], act) for _ in range(source["gnn.layers_mp"])
            )
        post, dropout = source["gnn.layers_post_mp"], source["gnn.dropout"]
        self.head_kind = source["gnn.head"]
        head: list[nn.Module] = []
        if self.head_kind == "mlp_graph":  # MLPGraphHead
            for _ in range(post - 1):
                head += [nn.Dropout(dropout), nn.Linear(dim, dim, bias=True), ACTIVATIONS[act]()]
            head += [nn.Dropout(dropout), nn.Linear(dim, info.num_outputs, bias=True)]
        else:  # GraphGym MLP(new_layer_config(...)): hidden GeneralLayers of a fresh LayerConfig, then Linear
            out = info.num_outputs if self.head_kind == "inductive_node" else dim  # inductive_edge: to dim_inner
            for _ in range(post - 1):
                head += [PygLinear(dim, dim, bias=True), nn.ReLU(), SourceL2Norm()]
            head.append(PygLinear(dim, out, bias=True))
        self.head = nn.Sequential(*head)
        self.gps = gps

    def forward(self, data: Batch, pairs: Tensor | None = None) -> Tensor:
        h = self.node_encoder(data.x)
        if self.pe == "rwse":
            pe = self.pe_encoder(self.raw_norm(data.rwse))
        elif self.pe == "lappe":
            pos = torch.stack([data.lap_pe, data.lap_eigval], dim=2)
            empty = torch.isnan(pos)
            pos = self.pe_encoder(self.linear_A(pos.masked_fill(empty, 0.0)))
            pe = pos.masked_fill(empty[:, :, :1], 0.0).sum(dim=1)
        h = h if self.pe == "none" else torch.cat([h, pe], dim=1)
        e = self.edge_encoder(data.edge_attr)
        for layer in self.layers:
            h, e = layer(h, e, data.edge_index, data.batch) if self.gps else layer(h, e, data.edge_index)
        if self.head_kind == "mlp_graph":
            return self.head(global_mean_pool(h, data.batch))
        h = self.head(h)
        return h if pairs is None else (h[pairs[0]] * h[pairs[1]]).sum(dim=-1)


def tiny_batch(info: DatasetInfo) -> Batch:
    """Two cycles (4 and 3 nodes) with the features, RWSE and LapPE of the dataset's kind (random values)."""
    torch.manual_seed(0)
    graphs = []
    for n in (4, 3):
        ring = torch.arange(n)
        edge_index = torch.cat([torch.stack([ring, (ring + 1) % n]), torch.stack([(ring + 1) % n, ring])], dim=1)
        atoms = info.node_features.kind == "atom"
        x = torch.zeros(n, 9, dtype=torch.long) if atoms else torch.rand(n, 14)
        edge_attr = torch.zeros(2 * n, 3, dtype=torch.long) if atoms else torch.rand(2 * n, 2)
        eigval = torch.cat([torch.rand(n), torch.full((10 - n,), float("nan"))]).expand(n, 10)
        lap_pe = torch.cat([torch.rand(n, n), torch.zeros(n, 10 - n)], dim=1)
        graphs.append(
            Data(x=x, edge_index=edge_index, edge_attr=edge_attr, rwse=torch.rand(n, 20), lap_pe=lap_pe, lap_eigval=eigval)
        )
    return Batch.from_data_list(graphs)


def call_name(module: nn.Module) -> str | None:
    """How :func:`forward_calls` counts a call of ``module``: an activation by its class, a dropout by its
    probability (``p = 0``, the identity, not at all), an L2 normalization as ``L2``; ``None`` for the rest."""
    if isinstance(module, nn.Dropout):
        return f"Dropout(p={module.p})" if module.p > 0 else None
    if isinstance(module, (SourceL2Norm, L2Normalize)):
        return "L2"
    return type(module).__name__ if isinstance(module, (nn.ReLU, nn.GELU)) else None


def forward_calls(network: nn.Module, run: Callable[[], object]) -> Counter[str]:
    """The activations, dropouts and L2 normalizations a forward pass in training mode calls, counted."""
    calls: Counter[str] = Counter()
    hooks = [
        module.register_forward_hook(lambda m, args, out, name=name: calls.update([name]))
        for module in network.modules()
        if (name := call_name(module)) is not None
    ]
    network.train()
    run()
    for hook in hooks:
        hook.remove()
    return calls


@pytest.fixture(autouse=True, scope="module")
def one_thread() -> Iterator[None]:
    """Forward passes on 7-node graphs: one intra-op thread (a pool of spinning threads costs ~0.1 s a kernel
    on a loaded machine)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def norm_layers(network: nn.Module) -> int:
    return sum(isinstance(m, (nn.BatchNorm1d, nn.LayerNorm)) for m in network.modules())


@pytest.mark.parametrize("recipe", RECIPES)
def test_the_network_is_the_source_model(recipe: str) -> None:
    cfg = recipe_config(recipe, "speedups=off")
    info = INFO[cfg.dataset.name]
    ours = network_builder(cfg, info)(cfg.model.hidden_dim)
    source = SourceNetwork(SOURCE[recipe], info)
    assert count_parameters(ours) == count_parameters(source)
    assert norm_layers(ours) == norm_layers(source)
    batch = tiny_batch(info)
    pairs = torch.tensor([[0, 1, 4], [2, 3, 6]])
    if info.level == "link":
        run_ours = lambda: score_pairs(ours.head, *ours(batch)[pairs])  # noqa: E731
    else:
        run_ours = lambda: ours(batch)  # noqa: E731
    assert forward_calls(ours, run_ours) == forward_calls(source, lambda: source(batch, pairs if info.level == "link" else None))


def test_the_gcn_networks_build_the_sources_edge_encoder_and_never_compute_it() -> None:
    """GraphGPS's feature encoder builds the BondEncoder under GCNConv, which reads no edge features:
    ``model.edge_encoder=always`` counts its parameters; ``auto`` leaves it out."""
    cfg = recipe_config("peptides-func-gcn", "speedups=off")
    info = INFO["peptides-func"]
    ours = network_builder(cfg, info)(cfg.model.hidden_dim)
    calls: list[str] = []
    ours.edge_encoder.register_forward_hook(lambda *args: calls.append("edge_encoder"))
    ours(tiny_batch(info))
    assert calls == []
    auto = network_builder(recipe_config("peptides-func-gcn", "speedups=off", "model.edge_encoder=auto"), info)(235)
    assert auto.edge_encoder is None
    assert count_parameters(ours) - count_parameters(auto) == count_parameters(BondEncoder(235))


def test_a_changed_model_fails_the_structure_comparison() -> None:
    """BatchNorm in the GCN blocks (graphbench's default normalization) adds norms and parameters."""
    cfg = recipe_config("peptides-func-gcn", "speedups=off", "normalization=batchnorm")
    ours = network_builder(cfg, INFO["peptides-func"])(cfg.model.hidden_dim)
    source = SourceNetwork(SOURCE["peptides-func-gcn"], INFO["peptides-func"])
    assert norm_layers(ours) == norm_layers(source) + 6
    assert count_parameters(ours) == count_parameters(source) + 6 * 2 * 235
