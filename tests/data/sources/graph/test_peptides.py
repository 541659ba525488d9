"""Peptides-func and Peptides-struct: the official raw formats on fixtures, and the real files when present."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch
from ogb.utils import smiles2graph

from graphbench.data.datamodules import GraphLevelDataModule
from graphbench.data.io.raw_files import RawFile, md5sum
from graphbench.data.sources.graph import peptides
from graphbench.data.sources.graph.peptides import (
    PEPTIDES_STRUCT_TARGETS,
    PeptidesFunc,
    PeptidesStruct,
    read_peptides_csv,
    read_split,
)
from graphbench.data.sources.molecules import featurize_smiles
from graphbench.vocabulary.errors import DataError
from tests.conftest import real_data_root
from tests.data._datamodules import graph_level

SMILES = ["CC(=O)N[C@@H](C)C(=O)O", "NCC(=O)NCC(=O)O", "c1ccccc1O"]


def write_fixture_csv(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [",smiles,peptide_seq,labels,identifier"]
    for i, s in enumerate(SMILES):
        labels = [int(b) for b in np.binary_repr(i + 1, width=10)]
        rows.append(f'{i},{s},SEQ{i},"{labels}",id{i}')
    with gzip.open(path, "wt") as handle:
        handle.write("\n".join(rows) + "\n")


def test_reads_official_csv_layout(tmp_path: Path) -> None:
    path = tmp_path / "peptide_multi_class_dataset.csv.gz"
    write_fixture_csv(path)
    smiles, labels = read_peptides_csv(path, "labels")
    assert smiles == SMILES
    assert labels[2] == [0, 0, 0, 0, 0, 0, 0, 0, 1, 1]


def test_label_cells_python_literals_and_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "peptide_multi_class_dataset.csv.gz"
    cells = ['"[0, 1]"', '"(1, 0.5)"', '"[1e-3, 2]"']
    rows = [",smiles,peptide_seq,labels,identifier"] + [f"{i},C,SEQ,{c},id{i}" for i, c in enumerate(cells)]
    with gzip.open(path, "wt") as handle:
        handle.write("\n".join(rows) + "\n")
    assert read_peptides_csv(path, "labels")[1] == [[0, 1], [1, 0.5], [0.001, 2]]
    rows.append('3,C,SEQ,"[0, oops]",id3')
    with gzip.open(path, "wt") as handle:
        handle.write("\n".join(rows) + "\n")
    with pytest.raises(DataError, match=r"line 5: a label cell must be a list of numbers like '\[0, 1, 0\]', got '\[0, oops\]'"):
        read_peptides_csv(path, "labels")


def test_bulk_featurization_equals_serial_smiles2graph() -> None:
    y = torch.zeros(len(SMILES), 10)
    data, slices = featurize_smiles(SMILES, y, num_workers=2)
    for i, s in enumerate(SMILES):
        ref = smiles2graph(s)
        n0, n1 = slices["x"][i], slices["x"][i + 1]
        e0, e1 = slices["edge_index"][i], slices["edge_index"][i + 1]
        assert np.array_equal(data.x[n0:n1].numpy(), ref["node_feat"])
        assert np.array_equal(data.edge_index[:, e0:e1].numpy(), ref["edge_index"])
        assert np.array_equal(data.edge_attr[e0:e1].numpy(), ref["edge_feat"])


def test_split_must_index_inside_the_dataset(tmp_path: Path) -> None:
    path = tmp_path / "split.pickle"
    path.write_bytes(pickle.dumps({"train": np.array([0, 1]), "val": np.array([2]), "test": np.array([7])}))
    with pytest.raises(DataError, match="indexes outside"):
        read_split(path, 3)


@pytest.mark.real_data
def test_real_peptides_func(shared_cache_dir: Path) -> None:
    root = real_data_root()
    dm = graph_level(
        PeptidesFunc(),
        root,
        shared_cache_dir,
        name="peptides-func",
        task_type="multilabel",
        metric="ap",
        higher_is_better=True,
        batch_size=64,
    )
    dm.setup()
    assert len(dm.dataset) == 15535
    assert [len(dm.splits[s]) for s in ("train", "val", "test")] == [10873, 2331, 2331]
    graph = dm.dataset[0]
    assert graph.x.shape[1] == 9 and graph.edge_attr.shape[1] == 3 and graph.y.shape == (1, 10)
    assert torch.equal(
        graph.x,
        torch.from_numpy(
            smiles2graph(read_peptides_csv(root / "peptides-functional/raw/peptide_multi_class_dataset.csv.gz", "labels")[0][0])[
                "node_feat"
            ]
        ),
    )


# -- Peptides-struct --------------------------------------------------------------------------------------

STRUCT_SMILES = ["CC(=O)N[C@@H](C)C(=O)O", "NCC(=O)NCC(=O)O", "c1ccccc1O", "CCN", "OCCO"]


def write_struct_fixture(root: Path) -> np.ndarray:
    folder = root / "peptides-structural"
    (folder / "raw").mkdir(parents=True)
    values = np.arange(len(STRUCT_SMILES) * 11, dtype=float).reshape(len(STRUCT_SMILES), 11) ** 1.5
    header = ",".join(["", "smiles", *PEPTIDES_STRUCT_TARGETS, "self_dist_matrix"])
    big = '"' + str([[0.5] * 500] * 80) + '"'  # a field longer than the csv module's default limit (131,072)
    rows = [",".join([str(i), s, *(repr(float(v)) for v in values[i]), big]) for i, s in enumerate(STRUCT_SMILES)]
    with gzip.open(folder / "raw" / "peptide_structure_dataset.csv.gz", "wt") as handle:
        handle.write("\n".join([header, *rows]) + "\n")
    split = {"train": np.array([0, 1, 2]), "val": np.array([3]), "test": np.array([4])}
    (folder / "splits_random_stratified_peptide_structure.pickle").write_bytes(pickle.dumps(split))
    return values


def struct_datamodule(root: Path, cache: Path, **source_args: object) -> GraphLevelDataModule:
    source = PeptidesStruct(featurize_workers=1, **source_args)
    return graph_level(
        source, root, cache, name="peptides-struct", task_type="regression", metric="mae", higher_is_better=False, batch_size=2
    )


def struct_checksums(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    files = [RawFile(f.relpath, md5=md5sum(root / f.relpath), url=f.url) for f in peptides.PEPTIDES_STRUCT_FILES]
    monkeypatch.setattr(peptides, "PEPTIDES_STRUCT_FILES", files)


def test_reads_targets_standardized_with_the_official_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    values = write_struct_fixture(tmp_path / "data")
    struct_checksums(monkeypatch, tmp_path / "data")
    dm = struct_datamodule(tmp_path / "data", tmp_path / "cache")
    dm.setup()
    y = dm.dataset.collated.y.double()
    expected = (values - values.mean(axis=0)) / values.std(axis=0, ddof=1)
    assert y.shape == (5, 11) and np.allclose(y.numpy(), expected, atol=1e-5)
    assert dm.splits["train"].tolist() == [0, 1, 2] and dm.splits["test"].tolist() == [4]
    assert dm.info.num_outputs == 11 and dm.info.node_features.kind == "atom"
    raw = struct_datamodule(tmp_path / "data", tmp_path / "cache2", standardize_targets=False)
    raw.setup()
    assert torch.allclose(raw.dataset.collated.y, torch.tensor(values, dtype=torch.float32))


def test_files_that_are_not_the_official_ones_are_rejected(tmp_path: Path) -> None:
    write_struct_fixture(tmp_path / "data")  # the fixture's MD5 is not the published one
    with pytest.raises(DataError, match="corrupted or not the official file"):
        struct_datamodule(tmp_path / "data", tmp_path / "cache").setup()
    assert not list((tmp_path / "cache").glob("*.pt")) if (tmp_path / "cache").exists() else True


def test_missing_target_column_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_struct_fixture(tmp_path / "data")
    path = tmp_path / "data" / "peptides-structural" / "raw" / "peptide_structure_dataset.csv.gz"
    with gzip.open(path, "rt") as handle:
        text = handle.read().replace("Spherocity", "Sphericity")
    with gzip.open(path, "wt") as handle:
        handle.write(text)
    struct_checksums(monkeypatch, tmp_path / "data")
    with pytest.raises(DataError, match="Spherocity"):
        struct_datamodule(tmp_path / "data", tmp_path / "cache").setup()
