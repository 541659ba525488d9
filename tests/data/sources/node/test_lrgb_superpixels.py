"""PascalVOC-SP / COCO-SP on fixtures in PyG's LRGBDataset raw layout, and node-level selection."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import pytest
import torch
from torch import nn

from graphbench.data.datamodules import NodeLevelDataModule
from graphbench.data.sources.node.lrgb_superpixels import COCO_CATEGORY_IDS, LRGBSuperpixels
from graphbench.modules.task_module import GraphTaskModule
from graphbench.vocabulary.errors import DataError
from tests.data._datamodules import node_level

SIZES = {"train": 4, "val": 2, "test": 2}


def make_graph(gen: torch.Generator, n: int, labels: list[int]) -> tuple:
    src = torch.arange(n - 1)
    edge_index = torch.stack([torch.cat([src, src + 1]), torch.cat([src + 1, src])])
    y = torch.tensor([labels[i % len(labels)] for i in range(n)])
    return (torch.rand(n, 14, generator=gen), torch.rand(edge_index.size(1), 2, generator=gen), edge_index, y)


def write_lrgb(root: Path, name: str, labels: list[int]) -> None:
    raw = root / name / "raw"
    raw.mkdir(parents=True)
    gen = torch.Generator().manual_seed(0)
    for split, count in SIZES.items():
        (raw / f"{split}.pickle").write_bytes(pickle.dumps([make_graph(gen, 3 + i, labels) for i in range(count)]))


def datamodule(root: Path, cache: Path, name: str) -> NodeLevelDataModule:
    source = LRGBSuperpixels(lrgb_name=name)
    return node_level(
        source, root, cache, name=name, task_type="multiclass", metric="f1_macro", higher_is_better=True, batch_size=3
    )


@pytest.mark.parametrize(("name", "labels"), [("pascalvoc-sp", [0, 20, 7]), ("coco-sp", [0, 90, 13, 84])])
def test_reads_official_layout_like_pyg(tmp_path: Path, name: str, labels: list[int]) -> None:
    from torch_geometric.datasets import LRGBDataset

    write_lrgb(tmp_path / "data", name, labels)
    dm = datamodule(tmp_path / "data", tmp_path / "cache", name)
    dm.setup()
    shutil.copytree(tmp_path / "data" / name, tmp_path / "pyg" / name)
    for split in ("train", "val", "test"):
        reference = LRGBDataset(str(tmp_path / "pyg"), name, split=split)
        ours = dm.split_dataset(split)
        assert len(ours) == len(reference) == SIZES[split]
        for a, b in zip(reference, ours):
            assert torch.equal(a.x, b.x) and torch.equal(a.edge_attr, b.edge_attr) and torch.equal(a.edge_index, b.edge_index)
            assert torch.equal(a.y, b.y)
            assert b[f"{split}_mask"].all() and not any(b[f"{s}_mask"].any() for s in SIZES if s != split)
    if name == "coco-sp":
        assert dm.dataset.collated.y.max() == len(COCO_CATEGORY_IDS) - 1 == 80
    info = dm.info
    assert info.level == "node" and info.node_features.dim == 14 and info.edge_features.dim == 2
    assert info.num_outputs == (21 if name == "pascalvoc-sp" else 81)


def test_node_level_outputs_are_selected_and_aligned(tmp_path: Path) -> None:
    write_lrgb(tmp_path / "data", "pascalvoc-sp", [0, 1, 2])
    dm = datamodule(tmp_path / "data", tmp_path / "cache", "pascalvoc-sp")
    dm.setup()
    module = GraphTaskModule(
        nn.Linear(14, 21), dm.info, optimizer=lambda p: torch.optim.SGD(p, lr=0.1), loss=nn.CrossEntropyLoss()
    )
    module.forward = lambda batch: module.network(batch.x)  # type: ignore[method-assign]
    seen = []
    for batch in dm.test_dataloader():
        outputs = module.test_step(batch, 0)
        assert outputs["y_pred"].shape == (batch.num_nodes, 21) and torch.equal(outputs["y_true"], batch.y)
        seen.append(outputs["index"])
    test_nodes = torch.cat(seen)
    first_test_graph = int(dm.splits["test"][0])
    start = int(dm.dataset.slices["x"][first_test_graph])
    assert test_nodes.tolist() == list(range(start, start + len(test_nodes)))  # n_id: positions in the whole dataset


def test_labels_outside_the_classes_are_rejected(tmp_path: Path) -> None:
    write_lrgb(tmp_path / "data", "pascalvoc-sp", [0, 255])
    with pytest.raises(DataError, match="outside the 21 classes"):
        datamodule(tmp_path / "data", tmp_path / "cache", "pascalvoc-sp").setup()
