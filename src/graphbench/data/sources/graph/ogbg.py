"""OGB molecular property prediction (Hu et al., 2020): ogbg-molhiv, ogbg-molpcba.

Raw layout (that of ``ogb.graphproppred.PygGraphPropPredDataset(name, root=<data_dir>)``)::

    ogbg_molhiv/mapping/mol.csv.gz               one row per molecule: task columns, 'smiles', 'mol_id'
    ogbg_molhiv/split/scaffold/{train,valid,test}.csv.gz   one molecule index per line (no header)

Molecules are featurized from the SMILES with ``ogb.utils.smiles2graph`` (9 atom, 3 bond features),
the function OGB used to produce its own graph files from the same SMILES.
"""

from __future__ import annotations

import csv
import gzip
import math
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from graphbench.data.info import DataFacts, FeatureSpec
from graphbench.data.io.archives import Archive
from graphbench.data.io.raw_files import RawFile
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.base import Source
from graphbench.data.sources.molecules import featurize_smiles
from graphbench.data.store.graph_store import GraphStore
from graphbench.vocabulary.errors import ArgumentError, DataError
from graphbench.vocabulary.splits import SPLITS

#: OGB name -> (download name in OGB's master.csv, number of tasks)
OGB_MOL_DATASETS: dict[str, tuple[str, int]] = {"ogbg-molhiv": ("hiv", 1), "ogbg-molpcba": ("pcba", 128)}
OGB_URL = "http://snap.stanford.edu/ogb/data/graphproppred/csv_mol_download/{}.zip"
SPLIT_FILES = {"train": "train", "val": "valid", "test": "test"}


def ogb_raw_files(ogb_name: str) -> list[RawFile]:
    folder = ogb_name.replace("-", "_")
    return [RawFile(f"{folder}/mapping/mol.csv.gz")] + [
        RawFile(f"{folder}/split/scaffold/{SPLIT_FILES[s]}.csv.gz") for s in SPLITS
    ]


def read_mol_csv(path: Path) -> tuple[list[str], Tensor, list[str]]:
    """SMILES, the labels [G, T] (an empty cell is an unlabelled task: NaN) and the task names."""
    with gzip.open(path, "rt", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None or "smiles" not in header:
            raise DataError(f"{path}: expected a header with a 'smiles' column, found {header}")
        smiles_col = header.index("smiles")
        task_cols = [i for i, c in enumerate(header) if c not in ("smiles", "mol_id")]
        smiles, rows = [], []
        for row in reader:
            smiles.append(row[smiles_col])
            rows.append([float(row[i]) if row[i].strip() else math.nan for i in task_cols])
    y = torch.tensor(np.asarray(rows, dtype=np.float32).reshape(len(smiles), len(task_cols)))
    return smiles, y, [header[i] for i in task_cols]


def read_split_csv(path: Path, num_graphs: int) -> Tensor:
    with gzip.open(path, "rt") as handle:
        try:
            idx = torch.tensor([int(line) for line in handle if line.strip()], dtype=torch.long)
        except ValueError as exc:
            raise DataError(f"{path}: expected one integer index per line ({exc})") from None
    if idx.numel() and (idx.min() < 0 or idx.max() >= num_graphs):
        raise DataError(f"{path}: indexes outside the {num_graphs} molecules")
    return idx


class OGBGraphProperty(Source):
    r"""An OGB molecule dataset with its official scaffold split. ``ogbg-molhiv``: 41,127 molecules, one
    binary task (HIV inhibition), ROC-AUC. ``ogbg-molpcba``: 437,929 molecules, 128 binary bioassays
    with missing labels (NaN, ignored by loss and metric), average precision over tasks.
    ``featurize_workers``: processes for the SMILES featurization (``None``: every usable core)."""

    def __init__(self, *, ogb_name: str, featurize_workers: int | None = None) -> None:
        if ogb_name not in OGB_MOL_DATASETS:
            raise ArgumentError(f"ogb_name={ogb_name!r} is not supported; valid: {sorted(OGB_MOL_DATASETS)}")
        self.ogb_name = ogb_name
        self.featurize_workers = featurize_workers

    def facts(self, store: GraphStore | None = None) -> DataFacts:
        num_tasks = OGB_MOL_DATASETS[self.ogb_name][1]
        return DataFacts(num_outputs=num_tasks, node_features=FeatureSpec("atom"), edge_features=FeatureSpec("bond"))

    def cache_params(self) -> tuple[Any, ...]:
        return (self.ogb_name,)

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, Tensor]]:
        download_name, expected = OGB_MOL_DATASETS[self.ogb_name]
        archive = Archive(OGB_URL.format(download_name), download_name + "/", self.ogb_name.replace("-", "_"))
        mol_path, *split_paths = raw.locate(ogb_raw_files(self.ogb_name), self.ogb_name, [archive])
        smiles, y, tasks = read_mol_csv(mol_path)
        if len(tasks) != expected:
            raise DataError(f"{mol_path}: {self.ogb_name} has {expected} tasks, found {len(tasks)} columns {tasks[:5]}...")
        data, slices = featurize_smiles(smiles, y, self.featurize_workers)
        splits = {s: read_split_csv(p, len(smiles)) for s, p in zip(SPLITS, split_paths)}
        return GraphStore(data, slices), splits
