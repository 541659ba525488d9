"""Per-dataset recipes (conf/recipe/<dataset>.yaml, conf/recipe/<dataset>/<model>.yaml and the group
overrides in conf/dataset/<dataset>.yaml): they apply, lose to the command line and to an experiment,
leave a dataset without one alone, and give every model a network that builds on the dataset's shape."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from hydra import compose
from omegaconf import DictConfig, OmegaConf, open_dict
from torch_geometric.data import Batch, Data

from graphbench.build.model import network_builder, network_width
from graphbench.config.checks import recipe_card_problems
from graphbench.data.datamodules import NodeLevelDataModule
from graphbench.data.datamodules.schema import READ_ELSEWHERE
from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.report.literature import paper_value
from graphbench.run.recipe import NO_PUBLISHED_SETTING, experiment_exists, with_recipe
from tests.paths import CONF

#: the datasets of docs/results.md's "Default recipes vs the literature", with their (node feature width, classes, level)
SHAPES: dict[str, tuple[int, int, str]] = {
    "cora": (1433, 7, "node"),
    "citeseer": (3703, 6, "node"),
    "texas": (1703, 5, "node"),
    "cornell": (1703, 5, "node"),
    "wisconsin": (1703, 5, "node"),
    "actor": (932, 5, "node"),
    "enzymes": (21, 6, "graph"),
    "proteins": (4, 2, "graph"),
    "mutag": (7, 2, "graph"),
}
MODELS = sorted(p.stem for p in (CONF / "model").glob("*.yaml"))


def composed(overrides: list[str]) -> tuple[DictConfig, DictConfig]:
    """The composed config without ``hydra``, and Hydra's group choices."""
    cfg = compose("config", overrides=overrides, return_hydra_config=True)
    choices = cfg.hydra.runtime.choices
    with open_dict(cfg):
        cfg.paths.output_dir = "/tmp/graphbench-recipe-test"
        del cfg["hydra"]
    return cfg, choices


def test_every_recipe_names_an_existing_dataset_and_model() -> None:
    datasets = {p.stem for p in (CONF / "dataset").glob("*.yaml")}
    for recipe in (CONF / "recipe").glob("*.yaml"):
        assert recipe.stem in datasets, f"{recipe} has no conf/dataset/{recipe.stem}.yaml"
    for recipe in (CONF / "recipe").glob("*/*.yaml"):  # a dataset family's per-model shapes
        assert recipe.stem in MODELS, recipe
        assert f"optional {recipe.parent.name}@_global_: ${{model}}" in "".join(
            p.read_text() for p in (CONF / "recipe").glob("*.yaml")
        ), f"no recipe loads {recipe.parent.name}/"


def test_the_issue_datasets_have_recipes() -> None:
    for name in SHAPES:
        assert (CONF / "recipe" / f"{name}.yaml").is_file(), name


@pytest.mark.usefixtures("hydra_conf")
def test_recipe_applies_kipf_welling_on_cora() -> None:
    cfg, choices = composed(["dataset=cora", "model=gcn"])
    assert (choices.normalization, choices.scheduler, choices.head) == ("none", "none", "linear")
    assert (cfg.model.hidden_dim, cfg.model.num_layers, cfg.model.dropout, cfg.model.input_dropout) == (16, 2, 0.5, 0.5)
    assert cfg.model.last_layer_outputs is True and cfg.model.encode_inputs is False and cfg.model.residual is False
    assert (cfg.optimizer.lr, cfg.optimizer.weight_decay, cfg.trainer.max_epochs) == (0.01, 5.0e-4, 200)
    assert cfg.dataset.split == "public" and cfg.dataset.normalize_features is True
    # the published values are the report's, not the DataModule's
    assert "literature" in cfg.dataset and "literature" in READ_ELSEWHERE and "literature" not in NodeLevelDataModule.keys()


@pytest.mark.usefixtures("hydra_conf")
def test_per_model_recipe_applies_gat_on_cora_and_citeseer() -> None:
    for name in ("cora", "citeseer"):
        cfg, _ = composed([f"dataset={name}", "model=gat"])
        assert (cfg.model.layer.heads, cfg.model.hidden_dim, cfg.model.dropout, cfg.model.layer.attn_dropout) == (8, 64, 0.6, 0.6)
        assert (cfg.optimizer.lr, cfg.optimizer.weight_decay, cfg.model.activation) == (0.005, 5.0e-4, "elu")
        assert cfg.model.last_layer_outputs is False
    # the GCN of the same dataset does not see GAT's file
    cfg, _ = composed(["dataset=cora", "model=gcn"])
    assert cfg.optimizer.lr == 0.01 and cfg.model.activation == "relu"


@pytest.mark.usefixtures("hydra_conf")
def test_command_line_values_and_groups_win_over_a_recipe() -> None:
    cfg, choices = composed(
        ["dataset=cora", "model=gat", "model.hidden_dim=16", "optimizer.lr=0.02", "normalization=batchnorm", "head=mlp2"]
    )
    assert (cfg.model.hidden_dim, cfg.optimizer.lr) == (16, 0.02)
    assert (choices.normalization, choices.head) == ("batchnorm", "mlp2")
    assert cfg.model.layer.heads == 8  # what the command line leaves alone still comes from the recipe
    cfg, choices = composed(["dataset=enzymes", "model=gcn", "budget=none", "dataset.batch_size=64"])
    assert choices.budget == "none" and cfg.dataset.batch_size == 64


@pytest.mark.usefixtures("hydra_conf")
def test_an_experiment_wins_over_a_recipe(tmp_path: Path) -> None:
    (tmp_path / "experiment").mkdir()
    (tmp_path / "experiment" / "recipe_probe.yaml").write_text(
        "# @package _global_\n"
        "defaults:\n  - override /dataset: cora\n  - override /model: gat\n  - override /normalization: layernorm\n"
        "model:\n  hidden_dim: 32\noptimizer:\n  lr: 0.123\n"
    )
    cfg, choices = composed([f"hydra.searchpath=[file://{tmp_path}]", "experiment=recipe_probe"])
    assert choices.normalization == "layernorm" and (cfg.model.hidden_dim, cfg.optimizer.lr) == (32, 0.123)
    assert cfg.model.layer.heads == 8 and cfg.trainer.max_epochs == 200  # the rest of the recipes still apply
    # the command line wins over both
    cfg, choices = composed([f"hydra.searchpath=[file://{tmp_path}]", "experiment=recipe_probe", "normalization=none"])
    assert choices.normalization == "none"
    # the repository's own experiment is unchanged
    cfg, choices = composed(["experiment=planetoid/cora-gcn"])
    assert (cfg.model.hidden_dim, cfg.model.num_layers, cfg.trainer.max_epochs, choices.normalization) == (16, 2, 200, "none")


@pytest.mark.usefixtures("hydra_conf")
def test_a_dataset_without_a_recipe_keeps_the_global_defaults() -> None:
    cfg, choices = composed(["dataset=zinc", "model=gcn"])
    assert (choices.normalization, choices.scheduler, choices.head, choices.budget) == ("batchnorm", "plateau", "mlp2", "none")
    assert (cfg.model.hidden_dim, cfg.model.num_layers, cfg.optimizer.lr, cfg.trainer.max_epochs) == (64, 4, 0.001, 40)


@pytest.mark.usefixtures("hydra_conf")
def test_tu_recipes_follow_benchmarking_gnns() -> None:
    for name in ("enzymes", "proteins", "mutag"):
        cfg, choices = composed([f"dataset={name}", "model=gcn"])
        assert choices.budget == "100k" and choices.normalization == "batchnorm" and choices.scheduler == "plateau"
        assert (cfg.dataset.batch_size, cfg.optimizer.lr, cfg.optimizer.weight_decay, cfg.model.num_layers) == (
            20,
            7.0e-4,
            0.0,
            4,
        )


def test_every_issue_dataset_cites_a_gcn_value() -> None:
    for name in SHAPES:
        recipe = OmegaConf.to_container(OmegaConf.load(CONF / "recipe" / f"{name}.yaml"), resolve=False)
        assert isinstance(recipe, dict)
        paper = paper_value({**recipe, "model": {"name": "gcn"}}, "accuracy")
        assert paper is not None and 0.2 < paper.value < 1.0 and paper.source, name


def tiny_batch(level: str, in_dim: int) -> Batch:
    """Two 4-node rings with ``in_dim`` dense features."""
    ring = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 0], [1, 0, 2, 1, 3, 2, 0, 3]])
    graphs = [Data(x=torch.rand(4, in_dim, generator=torch.Generator().manual_seed(i)), edge_index=ring) for i in range(2)]
    batch = Batch.from_data_list(graphs)
    if level == "node":
        del batch.batch  # node level: one full graph, no graph index
    return batch


def check_builds(name: str, model: str) -> None:
    """The network of ``dataset=name model=model`` builds (width solved under a budget) and predicts
    ``classes`` outputs per node or per graph."""
    in_dim, classes, level = SHAPES[name]
    info = DatasetInfo(
        name=name,
        level=level,
        task_type="multiclass",
        num_outputs=classes,
        metric="accuracy",
        higher_is_better=True,
        node_features=FeatureSpec("dense", in_dim),
        edge_features=None,
    )
    cfg, _ = composed([f"dataset={name}", f"model={model}"])
    make_network = network_builder(cfg, info)
    network = make_network(network_width(cfg, make_network)).eval()
    out = network(tiny_batch(level, in_dim))
    assert out.shape == (8 if level == "node" else 2, classes), (name, model)


#: the recipes' shapes (the last layer predicts; GAT's heads), the odd class count of Texas, a budget;
#: the slow test below builds every model under every recipe
FAST_BUILDS = [("cora", "gcn"), ("cora", "gat"), ("cora", "gatv2"), ("texas", "gat"), ("texas", "sage"), ("enzymes", "gcn")]


@pytest.mark.usefixtures("hydra_conf")
@pytest.mark.parametrize(("name", "model"), FAST_BUILDS)
def test_models_build_under_the_recipe(name: str, model: str) -> None:
    check_builds(name, model)


@pytest.mark.slow
@pytest.mark.usefixtures("hydra_conf")
@pytest.mark.parametrize("name", SHAPES)
def test_every_model_builds_under_every_recipe(name: str) -> None:
    for model in MODELS:
        check_builds(name, model)


DATASETS = sorted(p.stem for p in (CONF / "dataset").glob("*.yaml"))
#: the (dataset, model) pairs whose published setting is an experiment of the LRGB reassessment
LRGB_TUNED = {tuple(p.stem.rsplit("-", 1)) for p in (CONF / "experiment" / "lrgb-tuned").glob("*.yaml")}


def composed_with_recipe(overrides: list[str]) -> DictConfig:
    """``overrides`` composed as run.py composes them: with the dataset's recipe experiment under them."""
    return with_recipe(
        compose("config", overrides=overrides),
        overrides,
        lambda o: compose("config", overrides=list(o)),
        False,
        experiment_exists,
    )


def card_sources(pairs: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The card source of ``python run.py dataset=X model=Y`` for each pair, as run.py composes it
    (graphbench.run.recipe.with_recipe), each card checked to be well formed."""
    sources: dict[tuple[str, str], str] = {}
    for dataset, model in pairs:
        overrides = [f"dataset={dataset}", f"model={model}"]
        cfg = composed_with_recipe(overrides)
        assert recipe_card_problems(cfg.recipe_card) == [], (dataset, model)
        sources[dataset, model] = str(cfg.recipe_card.source)
    return sources


@pytest.mark.slow  # 41 datasets x 14 models: minutes on a loaded 2-core machine; the test below covers each once
def test_every_dataset_and_model_composes_a_card_with_a_source_or_no_published_setting(hydra_conf: None) -> None:
    """Every dataset YAML x every model: a card whose source is a paper or repository, or graphbench's explicit
    "no published setting"."""
    sources = card_sources([(dataset, model) for dataset in DATASETS for model in MODELS])
    published = {pair for pair, source in sources.items() if source != NO_PUBLISHED_SETTING}
    assert LRGB_TUNED <= published and len(LRGB_TUNED) == 16
    assert sources["peptides-func", "gcn"].startswith("toenshoff/LRGB@c3500cb")
    assert sources["cora", "sage"].startswith("Kipf & Welling 2017")
    assert sources["enzymes", "gatedgcn"].startswith("Dwivedi et al. 2020")
    assert sources["peptides-func", "sage"] == sources["zinc", "gcn"] == sources["cycles", "gine"] == NO_PUBLISHED_SETTING
    for dataset in ("cora", "citeseer", "texas", "cornell", "wisconsin", "actor", "enzymes", "proteins", "mutag", "syn-cora"):
        assert all(sources[dataset, model] != NO_PUBLISHED_SETTING for model in MODELS), dataset


def test_each_dataset_each_model_and_each_lrgb_tuned_pair_composes_a_card(hydra_conf: None) -> None:
    """The fast cover of the test above: every dataset once (the models in turn) and every LRGB-tuned pair."""
    pairs = [(dataset, MODELS[i % len(MODELS)]) for i, dataset in enumerate(DATASETS)]
    sources = card_sources(sorted({*pairs, *LRGB_TUNED}))
    assert {sources[pair][:18] for pair in LRGB_TUNED} == {"toenshoff/LRGB@c35"}
    assert {model for _, model in pairs} == set(MODELS)


def test_the_headline_command_trains_the_lrgb_tuned_gcn_with_the_head_as_a_deviation(hydra_conf: None) -> None:
    overrides = ["dataset=peptides-func", "model=gcn", "head=mlp2", "trainer.max_epochs=1"]
    cfg = composed_with_recipe(overrides)
    assert cfg.recipe_experiment == "lrgb-tuned/peptides-func-gcn"
    assert (cfg.model.hidden_dim, cfg.model.num_layers, cfg.normalization.name, cfg.pe.name) == (235, 6, "none", "rwse")
    assert (cfg.head.name, cfg.head.num_layers, cfg.head.dropout_first, cfg.head.dropout) == ("mlp2", 2, True, 0.1)
    assert OmegaConf.to_container(cfg.recipe_card.deviations) == [
        {"key": "head", "source": "mlp3", "ours": "mlp2", "why": "command line: head=mlp2", "effect": None},
        {"key": "trainer.max_epochs", "source": 250, "ours": 1, "why": "command line: trainer.max_epochs=1", "effect": None},
    ]
    paper = paper_value(OmegaConf.to_container(cfg, resolve=False), "ap")
    assert paper is not None and (paper.value, paper.std) == (0.686, 0.005)
