"""Every graph-level dataset YAML builds its DataModule (constructor only: no data is read)."""
from __future__ import annotations

from typing import Callable

import pytest
from omegaconf import DictConfig

from graphbench.train import build_datamodule

DATASETS = {  # name: (DataModule class, facts known without reading data: level, num_outputs, node feature kind)
    "peptides-struct": ("PeptidesStructDataModule", "graph", 11, "atom"),
    "zinc": ("ZINCDataModule", "graph", 1, "categorical"),
    "zinc-full": ("ZINCDataModule", "graph", 1, "categorical"),
    "aqsol": ("AQSOLDataModule", "graph", 1, "categorical"),
    "ogbg-molhiv": ("OGBGraphDataModule", "graph", 1, "atom"),
    "ogbg-molpcba": ("OGBGraphDataModule", "graph", 128, "atom"),
    "enzymes": ("TUDataModule", None, None, None),
    "proteins": ("TUDataModule", None, None, None),
    "mutag": ("TUDataModule", None, None, None),
    "aids": ("TUDataModule", None, None, None),
    "dd": ("TUDataModule", None, None, None),
    "csl": ("CSLDataModule", "graph", 10, "constant"),
    "graphtheoryprop": ("GraphTheoryPropDataModule", "graph", 3, "dense"),
    "mnist": ("SuperpixelsDataModule", "graph", 10, "dense"),
    "cifar10": ("SuperpixelsDataModule", "graph", 10, "dense"),
    "pascalvoc-sp": ("LRGBSuperpixelsDataModule", "node", 21, "dense"),
    "coco-sp": ("LRGBSuperpixelsDataModule", "node", 81, "dense"),
}


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_config_builds_the_datamodule(compose_cfg: Callable[..., DictConfig], name: str) -> None:
    cls, level, num_outputs, node_kind = DATASETS[name]
    cfg = compose_cfg([f"dataset={name}"])
    assert cfg.dataset.name == name and cfg.dataset.num_workers == 0
    for key in ("source", "task_type", "metric", "higher_is_better", "split", "batch_size"):
        assert key in cfg.dataset, f"{name}.yaml lacks {key}"
    dm = build_datamodule(cfg)
    assert type(dm).__name__ == cls and dm.name == name
    if level is not None:
        info = dm.info
        assert (info.level, info.num_outputs, info.node_features.kind) == (level, num_outputs, node_kind)
        assert (info.metric, info.task_type, info.higher_is_better) == (cfg.dataset.metric, cfg.dataset.task_type, cfg.dataset.higher_is_better)
