"""ogbg-molhiv / ogbg-molpcba on fixtures in OGB's raw layout (mapping/mol.csv.gz + split/scaffold/*.csv.gz)."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from ogb.utils import smiles2graph

from graphbench.data.datamodules import GraphLevelDataModule
from graphbench.data.sources.graph.ogbg import OGBGraphProperty
from graphbench.vocabulary.errors import ConfigError, DataError
from tests.data._datamodules import graph_level

SMILES = ["CCO", "c1ccccc1", "CC(=O)O", "N#N", "OCC(O)CO"]


def write_ogb(root: Path, folder: str, tasks: list[str], rows: list[list[str]], splits: dict[str, list[int]]) -> None:
    base = root / folder
    (base / "mapping").mkdir(parents=True)
    (base / "split" / "scaffold").mkdir(parents=True)
    lines = [",".join([*tasks, "smiles", "mol_id"])]
    lines += [",".join([*row, s, f"mol{i}"]) for i, (row, s) in enumerate(zip(rows, SMILES))]
    with gzip.open(base / "mapping" / "mol.csv.gz", "wt") as handle:
        handle.write("\n".join(lines) + "\n")
    for split, idx in splits.items():
        with gzip.open(base / "split" / "scaffold" / f"{split}.csv.gz", "wt") as handle:
            handle.write("".join(f"{i}\n" for i in idx))


def datamodule(root: Path, cache: Path, ogb_name: str) -> GraphLevelDataModule:
    source = OGBGraphProperty(ogb_name=ogb_name, featurize_workers=1)
    return graph_level(
        source, root, cache, name=ogb_name, task_type="binary", metric="rocauc", higher_is_better=True, batch_size=2
    )


SPLITS = {"train": [4, 0, 2], "valid": [1], "test": [3]}


def test_molhiv_layout(tmp_path: Path) -> None:
    write_ogb(tmp_path / "data", "ogbg_molhiv", ["HIV_active"], [["0"], ["1"], ["0"], ["1"], ["0"]], SPLITS)
    dm = datamodule(tmp_path / "data", tmp_path / "cache", "ogbg-molhiv")
    dm.setup()
    assert dm.splits["train"].tolist() == [4, 0, 2] and dm.splits["val"].tolist() == [1] and dm.splits["test"].tolist() == [3]
    assert dm.dataset.collated.y.view(-1).tolist() == [0, 1, 0, 1, 0]
    for i, s in enumerate(SMILES):
        ref = smiles2graph(s)
        graph = dm.dataset[i]
        assert np.array_equal(graph.x.numpy(), ref["node_feat"]) and np.array_equal(graph.edge_index.numpy(), ref["edge_index"])
        assert np.array_equal(graph.edge_attr.numpy(), ref["edge_feat"])
    assert dm.info.num_outputs == 1 and dm.info.node_features.kind == "atom" and dm.info.edge_features.kind == "bond"


def test_molpcba_missing_labels_are_nan(tmp_path: Path) -> None:
    tasks = [f"PCBA-{i}" for i in range(128)]
    rows = [["" if (i + t) % 3 == 0 else str((i * t) % 2) for t in range(128)] for i in range(5)]
    write_ogb(tmp_path / "data", "ogbg_molpcba", tasks, rows, SPLITS)
    dm = datamodule(tmp_path / "data", tmp_path / "cache", "ogbg-molpcba")
    dm.setup()
    y = dm.dataset.collated.y
    assert y.shape == (5, 128) and dm.info.num_outputs == 128
    assert math.isnan(y[0, 0]) and y[1, 1] == 1.0 and y[1, 0] == 0.0
    assert torch.isnan(y).sum() == sum(r.count("") for r in rows)


def test_wrong_task_count_and_name(tmp_path: Path) -> None:
    write_ogb(tmp_path / "data", "ogbg_molpcba", ["a", "b"], [["0", "1"]] * 5, SPLITS)
    with pytest.raises(DataError, match="has 128 tasks, found 2"):
        datamodule(tmp_path / "data", tmp_path / "cache", "ogbg-molpcba").setup()
    with pytest.raises(ConfigError, match="valid: \\['ogbg-molhiv', 'ogbg-molpcba'\\]"):
        datamodule(tmp_path, tmp_path, "ogbg-moltox21")
