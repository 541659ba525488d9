"""Every dataset YAML builds its DataModule and source (constructor only: no data is read), every
flat knob the source reads is one the user can override as ``dataset.<key>``, and only datasets of
many graphs carry ``dataset.batch_size`` (graphs per batch)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf

from graphbench.build.data import build_datamodule, source_knobs
from graphbench.vocabulary.errors import DataError
from tests.paths import CONF

DATASETS = {  # name: (DataModule, source, facts known without reading data: level, num_outputs, node feature kind)
    "peptides-struct": ("GraphLevelDataModule", "PeptidesStruct", "graph", 11, "atom"),
    "zinc": ("GraphLevelDataModule", "ZINC", "graph", 1, "categorical"),
    "zinc-full": ("GraphLevelDataModule", "ZINC", "graph", 1, "categorical"),
    "aqsol": ("GraphLevelDataModule", "AQSOL", "graph", 1, "categorical"),
    "ogbg-molhiv": ("GraphLevelDataModule", "OGBGraphProperty", "graph", 1, "atom"),
    "ogbg-molpcba": ("GraphLevelDataModule", "OGBGraphProperty", "graph", 128, "atom"),
    "enzymes": ("GraphLevelDataModule", "TUDataset", None, None, None),
    "proteins": ("GraphLevelDataModule", "TUDataset", None, None, None),
    "mutag": ("GraphLevelDataModule", "TUDataset", None, None, None),
    "aids": ("GraphLevelDataModule", "TUDataset", None, None, None),
    "dd": ("GraphLevelDataModule", "TUDataset", None, None, None),
    "csl": ("GraphLevelDataModule", "CSL", "graph", 10, "constant"),
    "graphtheoryprop": ("GraphLevelDataModule", "GraphTheoryProp", "graph", 3, "dense"),
    "mnist": ("GraphLevelDataModule", "BenchmarkingSuperpixels", "graph", 10, "dense"),
    "cifar10": ("GraphLevelDataModule", "BenchmarkingSuperpixels", "graph", 10, "dense"),
    "pascalvoc-sp": ("NodeLevelDataModule", "LRGBSuperpixels", "node", 21, "dense"),
    "coco-sp": ("NodeLevelDataModule", "LRGBSuperpixels", "node", 81, "dense"),
}
ALL = sorted(p.stem for p in (CONF / "dataset").glob("*.yaml"))


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_config_builds_the_datamodule(compose_cfg: Callable[..., DictConfig], name: str) -> None:
    cls, source_cls, level, num_outputs, node_kind = DATASETS[name]
    cfg = compose_cfg([f"dataset={name}"])
    assert cfg.dataset.name == name and cfg.dataset.num_workers == 0
    for key in ("source", "provenance", "task_type", "metric", "higher_is_better", "split", "batch_size"):
        assert key in cfg.dataset, f"{name}.yaml lacks {key}"
    dm = build_datamodule(cfg)
    assert type(dm).__name__ == cls and dm.name == name and type(dm.source).__name__ == source_cls
    if level is not None:
        info = dm.info
        assert (info.level, info.num_outputs, info.node_features.kind) == (level, num_outputs, node_kind)
        assert (info.metric, info.task_type, info.higher_is_better) == (
            cfg.dataset.metric,
            cfg.dataset.task_type,
            cfg.dataset.higher_is_better,
        )
    else:  # the facts are read from the data: only after setup, and asking before reads nothing
        with pytest.raises(DataError, match="call setup"):
            _ = dm.info
        assert not Path(cfg.paths.cache_dir).exists() or not list(Path(cfg.paths.cache_dir).iterdir())


@pytest.mark.parametrize("name", ALL)
def test_every_yaml_nests_its_source_and_reads_only_flat_knobs(compose_cfg: Callable[..., DictConfig], name: str) -> None:
    cfg = compose_cfg([f"dataset={name}"])
    assert cfg.dataset._target_.startswith("graphbench.data.datamodules.")
    assert cfg.dataset.source._target_.startswith("graphbench.data.sources.")
    source = OmegaConf.to_container(cfg.dataset.source, resolve=False)
    assert isinstance(source, dict)
    knobs = source_knobs(cfg.dataset)
    assert knobs == tuple(k for k in source if k != "_target_")
    assert all(source[k] == f"${{dataset.{k}}}" for k in knobs), f"{name}: every source argument reads the flat key of its name"
    dm = build_datamodule(cfg)  # every key is the schema's, the source's or read elsewhere
    assert dm.name == name and dm.source.level == dm.level


@pytest.mark.parametrize("name", ALL)
def test_only_datasets_of_many_graphs_carry_a_graph_batch_size(compose_cfg: Callable[..., DictConfig], name: str) -> None:
    cfg = compose_cfg([f"dataset={name}"])
    one_graph = get_class(cfg.dataset.source._target_).one_graph
    assert ("batch_size" in cfg.dataset) is not one_graph, f"{name}: dataset.batch_size means graphs per batch"


def test_one_graph_link_datasets_take_their_pairs_per_step_from_the_sampler(compose_cfg: Callable[..., DictConfig]) -> None:
    for name, pairs in (("ogbl-collab", 65536), ("collab", 32768)):  # OGB's 64 * 1024; Benchmarking GNNs' 32 * 1024
        assert build_datamodule(compose_cfg([f"dataset={name}"])).sampler.batch_size == pairs
        assert build_datamodule(compose_cfg([f"dataset={name}", "sampler.batch_size=40"])).sampler.batch_size == 40
        assert build_datamodule(compose_cfg([f"dataset={name}", "sampler=neighbor"])).sampler.batch_size == 1024
    assert "batch_size" not in compose_cfg(["dataset=cora"]).sampler  # node-level full batch: the whole graph


def test_overriding_a_flat_knob_reaches_the_source(compose_cfg: Callable[..., DictConfig]) -> None:
    dm = build_datamodule(compose_cfg(["dataset=enzymes", "dataset.split_index=7", "dataset.use_node_attr=false"]))
    assert dm.source.split_index == 7 and dm.source.use_node_attr is False
    dm = build_datamodule(compose_cfg(["dataset=cycles", "dataset.num_train=96", "dataset.batch_size=32"]))
    assert dm.source.sizes == (96, 250, 250) and dm.batch_size == 32
