"""syn-cora (Zhu et al., 2020, "Beyond Homophily in Graph Neural Networks", H2GCN): 1,490 nodes in 5
classes with Cora features, generated with a target edge homophily, the exact graphs of the NCMemo
memorization study (Jamadandi et al., "Memorization in Graph Neural Networks")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.utils import coalesce, remove_self_loops, to_undirected

from graphbench.data.io.raw_files import RawFile
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.base import OneGraphNodeSource
from graphbench.data.splits import stratified_split_masks
from graphbench.vocabulary.errors import ArgumentError, DataError

#: the homophily levels of the graphs the study used -> MD5 of ``syn-cora/h<h>-r1.npz`` (the files
#: redistributed with the NCMemo code, ``SBM/syn-cora/``)
SYN_CORA_MD5: dict[float, str] = {
    0.0: "8926c04e39504364a0954dc746e1d159",
    0.3: "a268de3753bfef37cd73759719add230",
    0.5: "53d6908d773cb88f167f1fe3b3a1a011",
    0.7: "619d84b11108cf2b348dc19094f307f7",
    1.0: "4049de18afa3ed7e0da94e416c77e1e0",
}
_URL = "https://raw.githubusercontent.com/AdarshMJ/MemorizationinGNNs/main/SBM/syn-cora"
#: the arrays of an H2GCN ``.npz``: CSR adjacency and CSR features (data, indices, indptr, shape), labels
NPZ_KEYS: tuple[str, ...] = (
    *(f"adj_{k}" for k in ("data", "indices", "indptr", "shape")),
    *(f"attr_{k}" for k in ("data", "indices", "indptr", "shape")),
    "labels",
)


def syn_cora_file(homophily: float) -> RawFile:
    """``syn-cora/h<homophily:.2f>-r1.npz`` under the data root."""
    name = f"h{homophily:.2f}-r1.npz"
    return RawFile(f"syn-cora/{name}", md5=SYN_CORA_MD5[homophily], url=f"{_URL}/{name}")


def _csr_rows_cols(arrays: Any, prefix: str, path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
    """The (row, col, value) triplets and shape of the CSR matrix ``<prefix>_*`` of an H2GCN ``.npz``."""
    data, indices, indptr = (np.asarray(arrays[f"{prefix}_{k}"]) for k in ("data", "indices", "indptr"))
    shape = tuple(int(s) for s in np.asarray(arrays[f"{prefix}_shape"]))
    if len(shape) != 2 or indptr.shape != (shape[0] + 1,) or indices.shape != data.shape or int(indptr[-1]) != len(data):
        raise DataError(f"{path}: '{prefix}_*' is not a CSR matrix (shape {shape}, indptr {indptr.shape}, {len(data)} values)")
    if len(indices) and (indices.min() < 0 or indices.max() >= shape[1]):
        raise DataError(f"{path}: '{prefix}_indices' has column indices outside 0..{shape[1] - 1}")
    rows = np.repeat(np.arange(shape[0]), np.diff(indptr))
    return rows, indices.astype(np.int64), data, (shape[0], shape[1])


def read_h2gcn_npz(path: Path) -> Data:
    """One graph from an H2GCN ``.npz`` (``allow_pickle=False``): ``x`` the dense features, ``y`` the
    labels, and ``edge_index`` the adjacency made symmetric, unweighted and free of self-loops, as the
    study's loader makes it (``adj + adj.T``, entries > 1 set to 1, diagonal set to 0)."""
    with np.load(path, allow_pickle=False) as arrays:
        missing = [k for k in NPZ_KEYS if k not in arrays.files]
        if missing:
            raise DataError(f"{path}: not an H2GCN syn-cora file, missing arrays {missing} (found {arrays.files})")
        row, col, _, adj_shape = _csr_rows_cols(arrays, "adj", path)
        frow, fcol, fval, attr_shape = _csr_rows_cols(arrays, "attr", path)
        labels = np.asarray(arrays["labels"])
    n = adj_shape[0]
    if adj_shape != (n, n) or attr_shape[0] != n or labels.shape != (n,):
        raise DataError(f"{path}: adjacency {adj_shape}, features {attr_shape} and labels {labels.shape} disagree on the nodes")
    if not np.issubdtype(labels.dtype, np.integer) or (n and labels.min() < 0):
        raise DataError(f"{path}: 'labels' must be non-negative integers, got dtype {labels.dtype}")
    x = torch.zeros(attr_shape, dtype=torch.float)
    x[torch.from_numpy(frow), torch.from_numpy(fcol)] = torch.from_numpy(fval.astype(np.float32))
    edge_index = torch.from_numpy(np.stack([row, col]))
    edge_index, _ = remove_self_loops(edge_index)
    edge_index = coalesce(to_undirected(edge_index, num_nodes=n), num_nodes=n)
    return Data(x=x, edge_index=edge_index, y=torch.from_numpy(labels.astype(np.int64)))


class SynCora(OneGraphNodeSource):
    r"""The syn-cora graph of edge homophily ``homophily`` (one of 0.0, 0.3, 0.5, 0.7, 1.0, the graphs
    the NCMemo study used), read from ``syn-cora/h<h>-r1.npz`` (H2GCN's format). The files ship no
    split; the fixed split ``stratified`` is the study's random 60/20/20 split, drawn per class with
    ``split_seed`` (:func:`~graphbench.data.splits.stratified_split_masks`)."""

    fixed_split = "stratified"

    def __init__(self, *, homophily: float, split_seed: int = 0, split_fractions: Any = (0.6, 0.2, 0.2)) -> None:
        valid = sorted(SYN_CORA_MD5)
        if isinstance(homophily, bool) or not isinstance(homophily, (int, float)) or float(homophily) not in SYN_CORA_MD5:
            raise ArgumentError(f"homophily={homophily!r} is not a syn-cora graph; valid: {', '.join(map(str, valid))}")
        self.homophily = float(homophily)
        self.split_seed = int(split_seed)
        self.split_fractions = tuple(float(f) for f in split_fractions)

    def cache_params(self) -> tuple[Any, ...]:
        return (self.homophily, self.split_seed, self.split_fractions)

    def read_graph(self, raw: RawRoot) -> Data:
        (path,) = raw.locate([syn_cora_file(self.homophily)], f"syn-cora (homophily {self.homophily})")
        graph = read_h2gcn_npz(path)
        masks: dict[str, Tensor] = stratified_split_masks(graph.y, self.split_fractions, self.split_seed)  # type: ignore[arg-type]
        for key, mask in masks.items():
            graph[key] = mask
        return graph
