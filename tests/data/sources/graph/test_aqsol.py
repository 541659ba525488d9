"""AQSOL on a fixture in PyG's raw layout (pickles of (x, edge_attr, edge_index, y) numpy tuples)."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from graphbench.data.datamodules import GraphLevelDataModule
from graphbench.data.sources.graph.aqsol import AQSOL
from graphbench.vocabulary.errors import DataError
from tests.data._datamodules import graph_level


def make_graph(rng: np.random.Generator, n: int, with_edges: bool = True) -> tuple:
    if with_edges:
        src = np.arange(n - 1)
        edge_index = np.stack([np.concatenate([src, src + 1]), np.concatenate([src + 1, src])])
    else:
        edge_index = np.zeros((2, 0), dtype=np.int64)
    bonds = rng.integers(1, 5, size=edge_index.shape[1] // 2)
    return (rng.integers(0, 65, size=n), np.concatenate([bonds, bonds]), edge_index, float(rng.normal()))


def write_aqsol(root: Path) -> None:
    raw = root / "AQSOL" / "raw"
    raw.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for split, count in (("train", 5), ("val", 2), ("test", 3)):
        graphs = [make_graph(rng, 2 + i) for i in range(count)]
        if split == "train":
            graphs.insert(2, make_graph(rng, 1, with_edges=False))  # a single atom: skipped, as PyG does
        (raw / f"{split}.pickle").write_bytes(pickle.dumps(graphs))
    for extra in ("atom_dict", "bond_dict"):  # present in the official folder, not read
        (raw / f"{extra}.pickle").write_bytes(pickle.dumps({}))


def datamodule(root: Path, cache: Path) -> GraphLevelDataModule:
    return graph_level(AQSOL(), root, cache, name="aqsol", task_type="regression", metric="mae", higher_is_better=False)


def test_reads_official_layout_like_pyg(tmp_path: Path) -> None:
    from torch_geometric.datasets import AQSOL

    write_aqsol(tmp_path / "data")
    dm = datamodule(tmp_path / "data", tmp_path / "cache")
    dm.setup()
    assert [len(dm.splits[s]) for s in ("train", "val", "test")] == [5, 2, 3]
    shutil.copytree(tmp_path / "data" / "AQSOL", tmp_path / "pyg")
    for split in ("train", "val", "test"):
        reference = AQSOL(str(tmp_path / "pyg"), split=split)
        ours = dm.split_dataset(split)
        assert len(ours) == len(reference)
        for a, b in zip(reference, ours):
            assert torch.equal(a.x.view(-1, 1), b.x) and torch.equal(a.edge_index, b.edge_index)
            assert torch.equal(a.edge_attr.view(-1, 1), b.edge_attr) and torch.allclose(a.y.view(1, 1), b.y)
    assert dm.info.node_features.cardinalities == (65,) and dm.info.edge_features.cardinalities == (5,)


def test_wrong_tuple_is_reported(tmp_path: Path) -> None:
    raw = tmp_path / "data" / "AQSOL" / "raw"
    raw.mkdir(parents=True)
    for split in ("train", "val", "test"):
        (raw / f"{split}.pickle").write_bytes(pickle.dumps([(np.zeros(2), np.zeros(2))]))
    with pytest.raises(DataError, match=r"expected a tuple \(x, edge_attr, edge_index, y\)"):
        datamodule(tmp_path / "data", tmp_path / "cache").setup()
