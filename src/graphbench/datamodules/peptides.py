"""LRGB Peptides-func (Dwivedi et al., 2022, "Long Range Graph Benchmark")."""
from __future__ import annotations

import ast
import csv
import gzip
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from graphbench.datamodules.base import GraphDataModule
from graphbench.datamodules.graph_store import GraphStore
from graphbench.datamodules.info import DatasetInfo, FeatureSpec
from graphbench.datamodules.molecules import as_float_labels, featurize_smiles
from graphbench.datamodules.raw_files import RawFile, as_index_array, ensure_raw_files, load_numpy_pickle
from graphbench.errors import DataError

PEPTIDES_FUNC_FILES = [
    RawFile(
        "peptides-functional/raw/peptide_multi_class_dataset.csv.gz",
        md5="701eb743e899f4d793f0e13c8fa5a1b4",
        url="https://www.dropbox.com/s/ol2v01usvaxbsr8/peptide_multi_class_dataset.csv.gz?dl=1",
    ),
    RawFile(
        "peptides-functional/splits_random_stratified_peptide.pickle",
        md5="5a0114bdadc80b94fc7ae974f13ef061",
        url="https://www.dropbox.com/s/j4zcnx2eipuo0xz/splits_random_stratified_peptide.pickle?dl=1",
    ),
]


def read_peptides_csv(path: Path, label_column: str) -> tuple[list[str], list[list[float]]]:
    """Read ``smiles`` and a list-valued label column from the official LRGB csv.gz."""
    smiles, labels = [], []
    with gzip.open(path, "rt", newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None or "smiles" not in reader.fieldnames or label_column not in reader.fieldnames:
            raise DataError(f"{path}: expected columns 'smiles' and '{label_column}', found {reader.fieldnames}")
        for row in reader:
            smiles.append(row["smiles"])
            labels.append(ast.literal_eval(row[label_column]))
    return smiles, labels


def read_split(path: Path, num_graphs: int) -> dict[str, Tensor]:
    """The official split pickle: a dict of int64 arrays ``train``/``val``/``test``."""
    raw = load_numpy_pickle(path)
    if not isinstance(raw, dict) or not {"train", "val", "test"} <= set(raw):
        raise DataError(f"{path}: expected a dict with keys train/val/test, got {type(raw).__name__}")
    splits = {k: torch.from_numpy(as_index_array(raw[k], k)) for k in ("train", "val", "test")}
    for k, idx in splits.items():
        if idx.numel() and (idx.min() < 0 or idx.max() >= num_graphs):
            raise DataError(f"{path}: split '{k}' indexes outside the {num_graphs} graphs")
    return splits


class PeptidesFuncDataModule(GraphDataModule):
    r"""Peptides-func: 15,535 peptides, 10-way multilabel binary classification of function,
    scored by average precision averaged over the labels (the LRGB protocol), with the official
    stratified split (10,873 / 2,331 / 2,331)."""

    version = "1"

    def __init__(self, *, download: bool = True, featurize_workers: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.download = download
        self.featurize_workers = featurize_workers

    @property
    def info(self) -> DatasetInfo:
        return self.make_info(num_outputs=10, node_features=FeatureSpec("atom"), edge_features=FeatureSpec("bond"))

    def raw_paths(self) -> list[Path]:
        return ensure_raw_files(self.data_dir, PEPTIDES_FUNC_FILES, "Peptides-func", self.download)

    def _processed(self) -> dict[str, Any]:
        self.raw_paths()  # verify the raw files even when a cache exists: a corrupted root must not pass
        return super()._processed()

    def build(self) -> tuple[GraphStore, dict[str, Tensor]]:
        csv_path, split_path = self.raw_paths()
        smiles, labels = read_peptides_csv(csv_path, "labels")
        data, slices = featurize_smiles(smiles, as_float_labels(labels), self.featurize_workers)
        return GraphStore(data, slices), read_split(split_path, len(smiles))
