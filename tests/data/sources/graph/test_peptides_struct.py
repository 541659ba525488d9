"""Peptides-struct on a fixture in the LRGB raw layout (csv.gz with target columns + split pickle)."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from graphbench.data.datamodules import GraphLevelDataModule
from graphbench.data.io.raw_files import RawFile, md5sum
from graphbench.data.sources.graph import peptides
from graphbench.data.sources.graph.peptides import PEPTIDES_STRUCT_TARGETS, PeptidesStruct
from graphbench.run.errors import DataError

SMILES = ["CC(=O)N[C@@H](C)C(=O)O", "NCC(=O)NCC(=O)O", "c1ccccc1O", "CCN", "OCCO"]


def write_fixture(root: Path) -> np.ndarray:
    folder = root / "peptides-structural"
    (folder / "raw").mkdir(parents=True)
    values = np.arange(len(SMILES) * 11, dtype=float).reshape(len(SMILES), 11) ** 1.5
    header = ",".join(["", "smiles", *PEPTIDES_STRUCT_TARGETS, "self_dist_matrix"])
    big = '"' + str([[0.5] * 500] * 80) + '"'  # a field longer than the csv module's default limit (131,072)
    rows = [",".join([str(i), s, *(repr(float(v)) for v in values[i]), big]) for i, s in enumerate(SMILES)]
    with gzip.open(folder / "raw" / "peptide_structure_dataset.csv.gz", "wt") as handle:
        handle.write("\n".join([header, *rows]) + "\n")
    split = {"train": np.array([0, 1, 2]), "val": np.array([3]), "test": np.array([4])}
    (folder / "splits_random_stratified_peptide_structure.pickle").write_bytes(pickle.dumps(split))
    return values


def datamodule(root: Path, cache: Path, **source_args: object) -> GraphLevelDataModule:
    return GraphLevelDataModule(
        source=PeptidesStruct(featurize_workers=1, **source_args),
        name="peptides-struct",
        download=False,  # type: ignore[arg-type]
        data_dir=root,
        cache_dir=cache,
        batch_size=2,
        task_type="regression",
        metric="mae",
        higher_is_better=False,
    )


def fixture_checksums(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    files = [RawFile(f.relpath, md5=md5sum(root / f.relpath), url=f.url) for f in peptides.PEPTIDES_STRUCT_FILES]
    monkeypatch.setattr(peptides, "PEPTIDES_STRUCT_FILES", files)


def test_reads_targets_standardized_with_the_official_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    values = write_fixture(tmp_path / "data")
    fixture_checksums(monkeypatch, tmp_path / "data")
    dm = datamodule(tmp_path / "data", tmp_path / "cache")
    dm.setup()
    y = dm.dataset.collated.y.double()
    expected = (values - values.mean(axis=0)) / values.std(axis=0, ddof=1)
    assert y.shape == (5, 11) and np.allclose(y.numpy(), expected, atol=1e-5)
    assert dm.splits["train"].tolist() == [0, 1, 2] and dm.splits["test"].tolist() == [4]
    assert dm.info.num_outputs == 11 and dm.info.node_features.kind == "atom"
    raw = datamodule(tmp_path / "data", tmp_path / "cache2", standardize_targets=False)
    raw.setup()
    assert torch.allclose(raw.dataset.collated.y, torch.tensor(values, dtype=torch.float32))


def test_files_that_are_not_the_official_ones_are_rejected(tmp_path: Path) -> None:
    write_fixture(tmp_path / "data")  # the fixture's MD5 is not the published one
    with pytest.raises(DataError, match="corrupted or not the official file"):
        datamodule(tmp_path / "data", tmp_path / "cache").setup()
    assert not list((tmp_path / "cache").glob("*.pt")) if (tmp_path / "cache").exists() else True


def test_missing_target_column_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_fixture(tmp_path / "data")
    path = tmp_path / "data" / "peptides-structural" / "raw" / "peptide_structure_dataset.csv.gz"
    with gzip.open(path, "rt") as handle:
        text = handle.read().replace("Spherocity", "Sphericity")
    with gzip.open(path, "wt") as handle:
        handle.write(text)
    fixture_checksums(monkeypatch, tmp_path / "data")
    with pytest.raises(DataError, match="Spherocity"):
        datamodule(tmp_path / "data", tmp_path / "cache").setup()
