"""TU datasets: the official text format on a fixture (compared with PyG's reader), the folds, and
the real ENZYMES / PROTEINS / MUTAG / AIDS files with the Benchmarking-GNNs index files when present."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

from graphbench.data.datamodules import GraphLevelDataModule
from graphbench.data.sources.graph.tudataset import TUDataset
from graphbench.vocabulary.errors import ConfigError, DataError
from tests.conftest import real_data_root
from tests.data._datamodules import graph_level

# three graphs: a triangle with a duplicated edge and a self loop, a path, an edge; classes 3, 1, 3, 1
EDGES = [
    (1, 2),
    (2, 1),
    (2, 3),
    (3, 2),
    (1, 3),
    (3, 1),
    (1, 3),
    (2, 2),
    (4, 5),
    (5, 4),
    (5, 6),
    (6, 5),
    (7, 8),
    (8, 7),
    (9, 10),
    (10, 9),
]
GRAPH_OF_NODE = [1, 1, 1, 2, 2, 2, 3, 3, 4, 4]
GRAPH_LABELS = [3, 1, 3, 1]
NODE_LABELS = [0, 1, 2, 0, 0, 1, 2, 2, 0, 1]
EDGE_LABELS = [1, 1, 2, 2, 3, 3, 3, 1, 1, 1, 2, 2, 3, 3, 1, 1]


def write_tu(root: Path, name: str = "TOY", graph_labels: list[int] = GRAPH_LABELS) -> Path:
    raw = root / "TUDataset" / name / "raw"
    raw.mkdir(parents=True)
    (raw / f"{name}_A.txt").write_text("".join(f"{a}, {b}\n" for a, b in EDGES))
    (raw / f"{name}_graph_indicator.txt").write_text("".join(f"{g}\n" for g in GRAPH_OF_NODE))
    (raw / f"{name}_graph_labels.txt").write_text("".join(f"{y}\n" for y in graph_labels))
    (raw / f"{name}_node_labels.txt").write_text("".join(f"{v}\n" for v in NODE_LABELS))
    (raw / f"{name}_node_attributes.txt").write_text("".join(f"{i * 0.5:.2f}, {-i:.1f}\n" for i in range(len(NODE_LABELS))))
    (raw / f"{name}_edge_labels.txt").write_text("".join(f"{v}\n" for v in EDGE_LABELS))
    return raw


def datamodule(root: Path, cache: Path, name: str = "toy", **source_args: object) -> GraphLevelDataModule:
    source = TUDataset(**{"tu_name": "TOY", "name": name, **source_args})  # type: ignore[arg-type]
    return graph_level(
        source, root, cache, name=name, task_type="multiclass", metric="accuracy", higher_is_better=True, batch_size=2
    )


@pytest.mark.parametrize("use_node_attr", [False, True])
def test_reads_the_tu_format_like_pyg(tmp_path: Path, use_node_attr: bool) -> None:
    from torch_geometric.datasets import TUDataset

    write_tu(tmp_path / "data")
    dm = datamodule(tmp_path / "data", tmp_path / "cache", use_node_attr=use_node_attr)
    dm.setup()
    shutil.copytree(tmp_path / "data" / "TUDataset", tmp_path / "pyg")
    reference = TUDataset(str(tmp_path / "pyg"), "TOY", use_node_attr=use_node_attr)
    assert len(dm.dataset) == len(reference) == 4
    for a, b in zip(reference, dm.dataset):
        assert torch.equal(a.edge_index, b.edge_index) and torch.allclose(a.x, b.x) and a.y.tolist() == b.y.tolist()
        assert torch.equal(a.edge_attr.argmax(dim=1), b.edge_attr.view(-1))
    first = dm.dataset[0]
    assert first.edge_index.tolist() == [[0, 0, 1, 1, 2, 2], [1, 2, 0, 2, 0, 1]]  # self loop and duplicate dropped
    assert dm.dataset.collated.y.tolist() == [1, 0, 1, 0]
    info = dm.info
    assert info.num_outputs == 2 and info.node_features.kind == "dense"
    assert info.node_features.dim == 3 + (2 if use_node_attr else 0) and info.edge_features.cardinalities == (3,)


def test_without_node_labels_the_attributes_alone_are_the_features_as_benchmarking_gnns_loader(tmp_path: Path) -> None:
    """DGL's LegacyTUDataset (benchmarking-gnns data/TUs.py): node attributes, when there are any, replace the labels."""
    write_tu(tmp_path / "data")
    dm = datamodule(tmp_path / "data", tmp_path / "cache", use_node_attr=True, use_node_labels=False)
    dm.setup()
    assert dm.info.node_features.dim == 2
    assert dm.dataset[1].x.tolist() == [[1.5, -3.0], [2.0, -4.0], [2.5, -5.0]]
    with_labels = datamodule(tmp_path / "data", tmp_path / "cache", use_node_attr=True)
    with_labels.setup()  # its own cache entry: three more columns, the one-hot labels
    assert with_labels.info.node_features.dim == 5 and with_labels.dataset[1].x[:, :2].tolist() == dm.dataset[1].x.tolist()


def test_stratified_folds_without_index_files(tmp_path: Path) -> None:
    labels = [1, 2] * 10
    raw = tmp_path / "data" / "TUDataset" / "BIG" / "raw"
    raw.mkdir(parents=True)
    (raw / "BIG_A.txt").write_text("".join(f"{2 * g + 1}, {2 * g + 2}\n{2 * g + 2}, {2 * g + 1}\n" for g in range(20)))
    (raw / "BIG_graph_indicator.txt").write_text("".join(f"{g + 1}\n{g + 1}\n" for g in range(20)))
    (raw / "BIG_graph_labels.txt").write_text("".join(f"{y}\n" for y in labels))
    tests = []
    for k in range(10):
        dm = datamodule(tmp_path / "data", tmp_path / "cache", name="big", tu_name="BIG", split_index=k)
        dm.setup()
        assert [len(dm.splits[s]) for s in ("train", "val", "test")] == [16, 2, 2]
        assert sorted(dm.dataset.collated.y[dm.splits["test"]].tolist()) == [0, 1]  # stratified
        tests.append(set(dm.splits["test"].tolist()))
    assert set().union(*tests) == set(range(20))
    assert dm.info.node_features.kind == "constant" and dm.info.edge_features is None


def test_index_files_give_the_fold(tmp_path: Path) -> None:
    root = tmp_path / "data"
    write_tu(root)
    folds = root / "benchmarking-gnns" / "TUs"
    folds.mkdir(parents=True)
    lines = {"train": ["0,1"] * 9 + ["2,3"], "val": ["2"] * 9 + ["0"], "test": ["3"] * 9 + ["1"]}
    for split, rows in lines.items():
        (folds / f"TOY_{split}.index").write_text("\n".join(rows) + "\n")
    dm = datamodule(root, tmp_path / "cache", fold_files="TOY", split_index=9)
    dm.setup()
    assert dm.splits["train"].tolist() == [2, 3] and dm.splits["val"].tolist() == [0] and dm.splits["test"].tolist() == [1]


def test_wrong_split_index_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^split_index=10 is not a fold of toy: valid values are 0\.\.9"):
        datamodule(tmp_path, tmp_path / "cache", split_index=10)
    with pytest.raises(DataError) as err:
        datamodule(tmp_path, tmp_path / "cache", fold_files="TOY").setup()
    for name in ("TOY_A.txt", "TOY_graph_indicator.txt", "TOY_graph_labels.txt", "TOY_train.index", "TOY_test.index"):
        assert name in str(err.value)


REAL = {  # name: (fold files, graphs, classes, approximate fold sizes)
    "ENZYMES": ("ENZYMES", 600, 6, [480, 60, 60]),
    "PROTEINS": ("PROTEINS_full", 1113, 2, [889, 112, 112]),
    "MUTAG": (None, 188, 2, None),
    "AIDS": (None, 2000, 2, None),
}


@pytest.mark.real_data
@pytest.mark.parametrize("name", sorted(REAL))
def test_real_tu_files(tmp_path: Path, name: str) -> None:
    root = real_data_root()
    fold_files, num_graphs, num_classes, sizes = REAL[name]
    dm = datamodule(root, tmp_path, name=name.lower(), tu_name=name, fold_files=fold_files, split_index=3, use_node_attr=True)
    dm.setup()
    assert len(dm.dataset) == num_graphs and dm.info.num_outputs == num_classes
    lengths = [len(dm.splits[s]) for s in ("train", "val", "test")]
    assert sum(lengths) == num_graphs  # every fold covers all graphs
    if sizes is not None:
        assert all(abs(a - b) <= 1 for a, b in zip(lengths, sizes))
    y = dm.dataset.collated.y.numpy()
    overall = Counter(y.tolist())
    test = Counter(y[dm.splits["test"].numpy()].tolist())
    for cls, count in overall.items():  # every fold is stratified by class (also the PROTEINS_full folds on PROTEINS)
        assert abs(test[cls] / len(dm.splits["test"]) - count / len(y)) < 0.05
    assert np.intersect1d(dm.splits["train"].numpy(), dm.splits["test"].numpy()).size == 0
