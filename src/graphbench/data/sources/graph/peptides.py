"""LRGB Peptides-func and Peptides-struct (Dwivedi et al., 2022, "Long Range Graph Benchmark").

Both are the same 15,535 peptides (SMILES featurized with OGB's ``smiles2graph``) with the same
official stratified split; they differ in the csv.gz's label columns and in the task.
"""

from __future__ import annotations

import ast
import csv
import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from graphbench.data.info import DataFacts, FeatureSpec
from graphbench.data.io.raw_files import RawFile
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.io.safe_load import load_numpy_pickle
from graphbench.data.sources.base import Source
from graphbench.data.sources.molecules import as_float_labels, featurize_smiles
from graphbench.data.splits import as_index_array
from graphbench.data.store.graph_store import GraphStore
from graphbench.vocabulary.errors import DataError
from graphbench.vocabulary.splits import SPLITS

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

#: the LRGB loader's raw (unnormalized) targets file and split, with the MD5s that loader checks
PEPTIDES_STRUCT_FILES = [
    RawFile(
        "peptides-structural/raw/peptide_structure_dataset.csv.gz",
        md5="9786061a34298a0684150f2e4ff13f47",
        url="https://www.dropbox.com/s/464u3303eu2u4zp/peptide_structure_dataset.csv.gz?dl=1",
    ),
    RawFile(
        "peptides-structural/splits_random_stratified_peptide_structure.pickle",
        md5="5a0114bdadc80b94fc7ae974f13ef061",
        url="https://www.dropbox.com/s/9dfifzft1hqgow6/splits_random_stratified_peptide_structure.pickle?dl=1",
    ),
]

#: number of peptides in both LRGB Peptides datasets (split 10,873 / 2,331 / 2,331)
NUM_PEPTIDES = 15_535

PEPTIDES_STRUCT_TARGETS = (
    "Inertia_mass_a",
    "Inertia_mass_b",
    "Inertia_mass_c",
    "Inertia_valence_a",
    "Inertia_valence_b",
    "Inertia_valence_c",
    "length_a",
    "length_b",
    "length_c",
    "Spherocity",
    "Plane_best_fit",
)


def read_peptides_csv(path: Path, label_column: str) -> tuple[list[str], list[list[float]]]:
    """Read ``smiles`` and a list-valued label column from the official LRGB csv.gz."""
    smiles, labels = [], []
    with gzip.open(path, "rt", newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None or "smiles" not in reader.fieldnames or label_column not in reader.fieldnames:
            raise DataError(f"{path}: expected columns 'smiles' and '{label_column}', found {reader.fieldnames}")
        for row in reader:
            smiles.append(row["smiles"])
            labels.append(_parse_label_list(row[label_column], path, reader.line_num))
    return smiles, labels


def _parse_label_list(text: str, path: Path, line: int) -> list[float]:
    """A label cell such as ``"[0, 1, 0]"``: read as JSON (10x faster than ``ast.literal_eval``, and
    the same list for the official files), with ``ast.literal_eval`` for any other Python literal."""
    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = None
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, (int, float)) for v in value):
        raise DataError(f"{path}, line {line}: a label cell must be a list of numbers like '[0, 1, 0]', got {text[:80]!r}")
    return list(value)


def read_peptides_columns(path: Path, columns: tuple[str, ...]) -> tuple[list[str], np.ndarray]:
    """Read ``smiles`` and the float-valued ``columns`` (one target per column) from an LRGB csv.gz.

    Other columns may be very long (the structure file carries per-peptide distance matrices), so the
    csv module's field size limit is lifted while reading."""
    smiles, rows = [], []
    limit = csv.field_size_limit()
    csv.field_size_limit(2**31 - 1)
    try:
        with gzip.open(path, "rt", newline="") as handle:
            reader = csv.DictReader(handle)
            absent = [c for c in ("smiles", *columns) if c not in (reader.fieldnames or [])]
            if absent:
                raise DataError(f"{path}: columns {absent} missing; found {reader.fieldnames}")
            for row in reader:
                smiles.append(row["smiles"])
                rows.append([float(row[c]) for c in columns])
    finally:
        csv.field_size_limit(limit)
    return smiles, np.asarray(rows, dtype=np.float64).reshape(len(smiles), len(columns))


def standardize_columns(values: np.ndarray) -> np.ndarray:
    r"""Zero mean, unit (sample, ``ddof=1``) standard deviation per column over the whole dataset:
    :math:`(y - \bar y) / s`, the normalization of LRGB's released Peptides-struct targets."""
    std = values.std(axis=0, ddof=1)
    if np.any(std == 0):
        raise DataError("a Peptides-struct target is constant over the dataset; cannot standardize it")
    return (values - values.mean(axis=0)) / std


def read_split(path: Path, num_graphs: int) -> dict[str, Tensor]:
    """The official split pickle: a dict of int64 arrays ``train``/``val``/``test``."""
    raw = load_numpy_pickle(path)
    if not isinstance(raw, dict) or not set(SPLITS) <= set(raw):
        raise DataError(f"{path}: expected a dict with keys train/val/test, got {type(raw).__name__}")
    splits = {k: torch.from_numpy(as_index_array(raw[k], k)) for k in SPLITS}
    for k, idx in splits.items():
        if idx.numel() and (idx.min() < 0 or idx.max() >= num_graphs):
            raise DataError(f"{path}: split '{k}' indexes outside the {num_graphs} graphs")
    return splits


class _Peptides(Source):
    """What Peptides-func and -struct share: MD5-checked raw files (checked even when a processed
    cache exists: a corrupted data root must not pass), SMILES featurization, the official split.
    ``featurize_workers``: processes for the featurization (``None``: every usable core)."""

    title: str = ""
    num_outputs: int = 0

    def __init__(self, *, featurize_workers: int | None = None) -> None:
        self.featurize_workers = featurize_workers

    def facts(self, store: GraphStore | None = None) -> DataFacts:
        return DataFacts(num_outputs=self.num_outputs, node_features=FeatureSpec("atom"), edge_features=FeatureSpec("bond"))

    def expected_num_graphs(self) -> int | None:
        return NUM_PEPTIDES

    def raw_files(self) -> list[RawFile]:
        raise NotImplementedError

    def raw_paths(self, raw: RawRoot) -> list[Path]:
        return raw.locate(self.raw_files(), self.title)

    def check_raw_files(self, raw: RawRoot) -> None:
        self.raw_paths(raw)

    def read_labels(self, csv_path: Path) -> tuple[list[str], Tensor]:
        raise NotImplementedError

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, Tensor]]:
        csv_path, split_path = self.raw_paths(raw)
        smiles, y = self.read_labels(csv_path)
        data, slices = featurize_smiles(smiles, y, self.featurize_workers)
        return GraphStore(data, slices), read_split(split_path, len(smiles))


class PeptidesFunc(_Peptides):
    r"""Peptides-func: 15,535 peptides, 10-way multilabel binary classification of function,
    scored by average precision averaged over the labels (the LRGB protocol), with the official
    stratified split (10,873 / 2,331 / 2,331)."""

    title = "Peptides-func"
    num_outputs = 10

    def raw_files(self) -> list[RawFile]:
        return PEPTIDES_FUNC_FILES

    def read_labels(self, csv_path: Path) -> tuple[list[str], Tensor]:
        smiles, labels = read_peptides_csv(csv_path, "labels")
        return smiles, as_float_labels(labels)


class PeptidesStruct(_Peptides):
    r"""Peptides-struct: the same peptides and split, 11 regression targets of 3D structure
    (inertia of mass and valence, lengths along the principal axes, sphericity, plane of best fit),
    scored by MAE averaged over targets (LRGB).

    The targets are standardized per column over the whole dataset (mean 0, sample std 1), which is
    what LRGB's released ``peptide_structure_normalized_dataset.csv.gz`` holds and what published
    Peptides-struct MAEs refer to; ``standardize_targets: false`` keeps the raw values."""

    title = "Peptides-struct"
    num_outputs = len(PEPTIDES_STRUCT_TARGETS)

    def __init__(self, *, standardize_targets: bool = True, featurize_workers: int | None = None) -> None:
        super().__init__(featurize_workers=featurize_workers)
        self.standardize_targets = standardize_targets

    def cache_params(self) -> tuple[Any, ...]:
        return (self.standardize_targets,)

    def raw_files(self) -> list[RawFile]:
        return PEPTIDES_STRUCT_FILES

    def read_labels(self, csv_path: Path) -> tuple[list[str], Tensor]:
        smiles, values = read_peptides_columns(csv_path, PEPTIDES_STRUCT_TARGETS)
        if self.standardize_targets:
            values = standardize_columns(values)
        return smiles, torch.from_numpy(values.astype(np.float32))
