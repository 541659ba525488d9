"""Geom-GCN's heterophilic node classification graphs (Pei et al., 2020): WebKB (Texas, Cornell,
Wisconsin) and Actor, with their 10 fixed splits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.utils import coalesce

from graphbench.data.io.raw_files import RawFile
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.base import OneGraphNodeSource
from graphbench.vocabulary.errors import DataError

NUM_GEOM_GCN_SPLITS = 10
_URL = "https://raw.githubusercontent.com/graphdml-uiuc-jlu/geom-gcn/master"

#: config name -> (folder under the data root, prefix of the split files, feature format)
GEOM_GCN_DATASETS: dict[str, tuple[str, str, str]] = {
    "texas": ("WebKB/texas", "texas", "dense"),
    "cornell": ("WebKB/cornell", "cornell", "dense"),
    "wisconsin": ("WebKB/wisconsin", "wisconsin", "dense"),
    "actor": ("Actor", "film", "indices"),
}


def geom_gcn_raw_files(name: str) -> list[RawFile]:
    """The raw layout of ``torch_geometric.datasets.WebKB`` / ``Actor``: ``<folder>/raw/`` holds
    ``out1_node_feature_label.txt``, ``out1_graph_edges.txt`` and ``<prefix>_split_0.6_0.2_<i>.npz``."""
    if name not in GEOM_GCN_DATASETS:
        raise DataError(f"unknown Geom-GCN dataset {name!r}; valid: {sorted(GEOM_GCN_DATASETS)}")
    folder, prefix, _ = GEOM_GCN_DATASETS[name]
    remote = "film" if name == "actor" else name
    files = [
        RawFile(f"{folder}/raw/{f}", url=f"{_URL}/new_data/{remote}/{f}")
        for f in ("out1_node_feature_label.txt", "out1_graph_edges.txt")
    ]
    files += [
        RawFile(f"{folder}/raw/{prefix}_split_0.6_0.2_{i}.npz", url=f"{_URL}/splits/{prefix}_split_0.6_0.2_{i}.npz")
        for i in range(NUM_GEOM_GCN_SPLITS)
    ]
    return files


def _read_rows(path: Path, columns: int) -> list[list[str]]:
    """Tab-separated rows after the header line, each with exactly ``columns`` fields."""
    lines = [line for line in Path(path).read_text().split("\n")[1:] if line.strip()]
    rows = [line.rstrip("\r").split("\t") for line in lines]
    bad = [i + 2 for i, r in enumerate(rows) if len(r) != columns]
    if bad:
        raise DataError(f"{path}: expected {columns} tab-separated columns, lines {bad[:5]} differ")
    return rows


def read_node_features(path: Path, feature_format: str) -> tuple[Tensor, Tensor]:
    """``node_id<TAB>features<TAB>label`` rows. ``dense``: the comma-separated feature vector (WebKB);
    ``indices``: the comma-separated indices of the node's non-zero binary features (Actor), the feature
    width being the largest index + 1 (as PyG reads it). Rows are placed at their ``node_id``."""
    rows = _read_rows(path, 3)
    ids = np.array([int(r[0]) for r in rows])
    if sorted(ids.tolist()) != list(range(len(rows))):
        raise DataError(f"{path}: node ids must be 0..{len(rows) - 1}, each once")
    labels = torch.empty(len(rows), dtype=torch.long)
    labels[torch.from_numpy(ids)] = torch.tensor([int(r[2]) for r in rows])
    if feature_format == "dense":
        values = np.array([[float(v) for v in r[1].split(",")] for r in rows], dtype=np.float32)
        x = torch.zeros(values.shape, dtype=torch.float)
        x[torch.from_numpy(ids)] = torch.from_numpy(values)
        return x, labels
    indices = [[int(v) for v in r[1].split(",")] for r in rows]
    width = max(max(idx) for idx in indices) + 1
    x = torch.zeros(len(rows), width)
    row = torch.tensor([i for i, idx in zip(ids, indices) for _ in idx])
    x[row, torch.tensor([v for idx in indices for v in idx])] = 1.0
    return x, labels


def read_edges(path: Path, num_nodes: int) -> Tensor:
    """``source<TAB>target`` rows -> directed ``edge_index``, sorted, duplicates merged (PyG's ``coalesce``)."""
    rows = _read_rows(path, 2)
    edges = torch.tensor([[int(a), int(b)] for a, b in rows], dtype=torch.long).view(-1, 2)
    if edges.numel() and (edges.min() < 0 or edges.max() >= num_nodes):
        raise DataError(f"{path}: edge endpoints must lie in 0..{num_nodes - 1}")
    return coalesce(edges.t(), num_nodes=num_nodes)


def read_split_masks(paths: list[Path], num_nodes: int) -> dict[str, Tensor]:
    """The fixed splits, one ``.npz`` each with ``train_mask``/``val_mask``/``test_mask`` -> ``[N, S]``."""
    masks: dict[str, list[Tensor]] = {"train_mask": [], "val_mask": [], "test_mask": []}
    for path in paths:
        with np.load(path, allow_pickle=False) as arrays:
            for key in masks:
                if key not in arrays.files or arrays[key].shape != (num_nodes,):
                    raise DataError(f"{path}: expected '{key}' of shape ({num_nodes},), found keys {arrays.files}")
                masks[key].append(torch.from_numpy(arrays[key].astype(bool)))
    return {k: torch.stack(v, dim=1) for k, v in masks.items()}


def read_geom_gcn(raw: RawRoot, name: str) -> Data:
    """One graph with ``train_mask``/``val_mask``/``test_mask`` of shape ``[N, 10]``, identical to
    ``torch_geometric.datasets.WebKB(root, name)`` / ``Actor(root)`` (edges kept directed, as there)."""
    paths = raw.locate(geom_gcn_raw_files(name), name)
    x, y = read_node_features(paths[0], GEOM_GCN_DATASETS[name][2])
    edge_index = read_edges(paths[1], x.size(0))
    return Data(x=x, edge_index=edge_index, y=y, **read_split_masks(paths[2:], x.size(0)))


class GeomGCN(OneGraphNodeSource):
    r"""Texas, Cornell, Wisconsin (WebKB web pages) and Actor (co-occurrence on Wikipedia), the
    heterophilic benchmarks of Geom-GCN (Pei et al., 2020). The fixed split ``geom-gcn`` is one of
    the 10 splits shipped with the data (``split_index`` 0..9)."""

    fixed_split = "geom-gcn"
    num_fixed_splits = NUM_GEOM_GCN_SPLITS

    def __init__(self, *, name: str) -> None:
        if name not in GEOM_GCN_DATASETS:
            raise DataError(f"unknown Geom-GCN dataset {name!r}; valid: {sorted(GEOM_GCN_DATASETS)}")
        self.name = name

    def cache_params(self) -> tuple[Any, ...]:
        return (self.name,)

    def read_graph(self, raw: RawRoot) -> Data:
        return read_geom_gcn(raw, self.name)
