"""ZINC / ZINC-full on fixtures in PyG's raw layout (pickles of tensor dicts + .index files)."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import pytest
import torch

from graphbench.data.datamodules import GraphLevelDataModule
from graphbench.data.sources.graph.zinc import ZINC
from graphbench.vocabulary.errors import DataError
from tests.data._datamodules import graph_level

SIZES = {"train": 6, "val": 3, "test": 3}
SUBSET = {"train": [4, 0, 2], "val": [1], "test": [2, 0]}


def make_molecule(gen: torch.Generator, n: int) -> dict:
    upper = torch.triu(torch.randint(0, 4, (n, n), generator=gen) * (torch.rand(n, n, generator=gen) < 0.4), diagonal=1)
    return {
        "num_atom": n,
        "atom_type": torch.randint(0, 28, (n,), generator=gen),
        "bond_type": upper + upper.t(),
        "logP_SA_cycle_normalized": torch.randn(1, generator=gen),
    }


def write_zinc(root: Path) -> dict[str, list[dict]]:
    raw = root / "ZINC" / "raw"
    raw.mkdir(parents=True)
    gen = torch.Generator().manual_seed(0)
    mols = {}
    for split, count in SIZES.items():
        mols[split] = [make_molecule(gen, 3 + i % 4) for i in range(count)]
        (raw / f"{split}.pickle").write_bytes(pickle.dumps(mols[split]))
        (raw / f"{split}.index").write_text(",".join(map(str, SUBSET[split])) + "\n")
    return mols


def datamodule(root: Path, cache: Path, subset: bool) -> GraphLevelDataModule:
    name = "zinc" if subset else "zinc-full"
    return graph_level(ZINC(subset=subset), root, cache, name=name, task_type="regression", metric="mae", higher_is_better=False)


@pytest.mark.parametrize("subset", [True, False])
def test_reads_official_layout_like_pyg(tmp_path: Path, subset: bool) -> None:
    from torch_geometric.datasets import ZINC

    write_zinc(tmp_path / "data")
    dm = datamodule(tmp_path / "data", tmp_path / "cache", subset)
    dm.setup()
    expected_sizes = [len(SUBSET[s]) if subset else SIZES[s] for s in ("train", "val", "test")]
    assert [len(dm.splits[s]) for s in ("train", "val", "test")] == expected_sizes
    shutil.copytree(tmp_path / "data" / "ZINC", tmp_path / "pyg")
    for split in ("train", "val", "test"):
        reference = ZINC(str(tmp_path / "pyg"), subset=subset, split=split)
        ours = dm.split_dataset(split)
        assert len(ours) == len(reference)
        for a, b in zip(reference, ours):
            assert torch.equal(a.x, b.x) and torch.equal(a.edge_index, b.edge_index)
            assert torch.equal(a.edge_attr.view(-1, 1), b.edge_attr) and torch.allclose(a.y.view(1, 1), b.y)
    info = dm.info
    assert info.node_features.cardinalities == (28,) and info.edge_features.cardinalities == (4,) and info.num_outputs == 1


def test_bond_matrix_becomes_both_edge_directions(tmp_path: Path) -> None:
    root = tmp_path / "data"
    raw = root / "ZINC" / "raw"
    raw.mkdir(parents=True)
    mol = {
        "atom_type": torch.tensor([1, 2, 3]),
        "bond_type": torch.tensor([[0, 2, 0], [2, 0, 1], [0, 1, 0]]),
        "logP_SA_cycle_normalized": torch.tensor([0.5]),
    }
    for split in ("train", "val", "test"):
        (raw / f"{split}.pickle").write_bytes(pickle.dumps([mol]))
    dm = datamodule(root, tmp_path / "cache", subset=False)
    dm.setup()
    graph = dm.dataset[0]
    assert graph.edge_index.tolist() == [[0, 1, 1, 2], [1, 0, 2, 1]]
    assert graph.edge_attr.view(-1).tolist() == [2, 2, 1, 1] and graph.y.tolist() == [[0.5]]


def test_missing_index_files_are_named(tmp_path: Path) -> None:
    root = tmp_path / "data"
    write_zinc(root)
    (root / "ZINC/raw/val.index").unlink()
    with pytest.raises(DataError, match=r"val.index"):
        datamodule(root, tmp_path / "cache", subset=True).setup()
    datamodule(root, tmp_path / "cache", subset=False).setup()  # ZINC-full does not need them


def test_malformed_molecule_is_reported(tmp_path: Path) -> None:
    root = tmp_path / "data"
    raw = root / "ZINC" / "raw"
    raw.mkdir(parents=True)
    for split in ("train", "val", "test"):
        (raw / f"{split}.pickle").write_bytes(pickle.dumps([{"atom_type": torch.tensor([1])}]))
    with pytest.raises(DataError, match="expected a dict with keys"):
        datamodule(root, tmp_path / "cache", subset=False).setup()
