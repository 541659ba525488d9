"""Planetoid citation graphs Cora, CiteSeer, PubMed (Yang et al., 2016) in their official raw format."""
from __future__ import annotations

import codecs
import io
import pickle
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data

from graphbench.data.datamodules.node_level import NodeDataModule
from graphbench.data.io.raw_files import RawFile, ensure_raw_files
from graphbench.errors import DataError

PLANETOID_NAMES: dict[str, str] = {"cora": "Cora", "citeseer": "CiteSeer", "pubmed": "PubMed"}
PLANETOID_PARTS: tuple[str, ...] = ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index")
_URL = "https://github.com/kimiyoung/planetoid/raw/master/data"


def planetoid_raw_files(name: str) -> list[RawFile]:
    """``Planetoid/<Name>/raw/ind.<name>.<part>``, the layout of ``torch_geometric.datasets.Planetoid``."""
    if name not in PLANETOID_NAMES:
        raise DataError(f"unknown Planetoid dataset {name!r}; valid: {sorted(PLANETOID_NAMES)}")
    folder = PLANETOID_NAMES[name]
    return [RawFile(f"Planetoid/{folder}/raw/ind.{name}.{part}", url=f"{_URL}/ind.{name}.{part}") for part in PLANETOID_PARTS]


class _SparseMatrixState:
    """Stands in for ``scipy.sparse.csr_matrix`` while unpickling: it only records the pickled state
    (``data``, ``indices``, ``indptr``, ``_shape``); no scipy code runs."""

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.state = state

    def to_dense(self) -> np.ndarray:
        state = self.state
        shape = state.get("_shape", state.get("shape"))
        data, indices, indptr = (np.asarray(state[k]) for k in ("data", "indices", "indptr"))
        if shape is None or len(indptr) != shape[0] + 1:
            raise DataError("malformed sparse matrix in a Planetoid pickle")
        dense = np.zeros(shape, dtype=np.float32)
        rows = np.repeat(np.arange(shape[0]), np.diff(indptr))
        dense[rows, indices] = data
        return dense


def _reconstruct() -> Any:
    try:
        from numpy._core.multiarray import _reconstruct as fn
    except ImportError:  # numpy < 2
        from numpy.core.multiarray import _reconstruct as fn  # type: ignore[no-redef]
    return fn


class _PlanetoidUnpickler(pickle.Unpickler):
    """Allows exactly what the official Planetoid pickles hold: numpy arrays, scipy CSR matrices (as a
    state-recording stand-in) and the ``defaultdict(list)`` adjacency (plus ``codecs.encode``, which
    Python 3 uses for bytes in protocol-2 pickles); refuses everything else."""

    def find_class(self, module: str, name: str) -> Any:
        allowed: dict[tuple[str, str], Any] = {
            ("numpy", "ndarray"): np.ndarray,
            ("numpy", "dtype"): np.dtype,
            ("numpy.core.multiarray", "_reconstruct"): _reconstruct(),
            ("numpy._core.multiarray", "_reconstruct"): _reconstruct(),
            ("scipy.sparse.csr", "csr_matrix"): _SparseMatrixState,
            ("scipy.sparse._csr", "csr_matrix"): _SparseMatrixState,
            ("collections", "defaultdict"): defaultdict,
            ("__builtin__", "list"): list,
            ("builtins", "list"): list,
            ("_codecs", "encode"): codecs.encode,  # bytes in protocol-2 pickles written by Python 3
        }
        if (module, name) in allowed:
            return allowed[(module, name)]
        raise pickle.UnpicklingError(f"refusing to unpickle {module}.{name}: not part of the Planetoid format")


def load_planetoid_pickle(path: Path) -> Any:
    """Unpickle one ``ind.<name>.<part>`` file (Python 2 pickles: latin1) with the restricted unpickler;
    sparse matrices come back dense (float32)."""
    try:
        obj = _PlanetoidUnpickler(io.BytesIO(Path(path).read_bytes()), encoding="latin1").load()
    except (pickle.UnpicklingError, EOFError, AttributeError, TypeError, ValueError) as exc:
        raise DataError(f"{path}: not a valid Planetoid pickle ({exc})") from exc
    return obj.to_dense() if isinstance(obj, _SparseMatrixState) else obj


def read_planetoid(data_dir: Path, name: str, download: bool = False) -> Data:
    r"""One graph with the public Planetoid split, exactly as ``torch_geometric.datasets.Planetoid``:
    training nodes are the first ``len(y)`` nodes, validation the next 500, test the nodes in
    ``test.index``; test rows are reordered by ``test.index``; CiteSeer's isolated test nodes (missing
    from ``tx``) get zero features and label 0 outside every mask; self-loops are removed and
    duplicate edges merged."""
    paths = dict(zip(PLANETOID_PARTS, ensure_raw_files(data_dir, planetoid_raw_files(name), PLANETOID_NAMES[name], download)))
    x, tx, allx, y, ty, ally, graph = (load_planetoid_pickle(paths[p]) for p in PLANETOID_PARTS[:7])
    test_index = torch.from_numpy(np.loadtxt(paths["test.index"], dtype=np.int64).reshape(-1))
    x, tx, allx, y, ty, ally = (torch.from_numpy(np.asarray(a, dtype=np.float32)) for a in (x, tx, allx, y, ty, ally))
    if not isinstance(graph, dict):
        raise DataError(f"{paths['graph']}: expected a dict of adjacency lists, got {type(graph).__name__}")
    sorted_test = test_index.sort().values
    if name == "citeseer":
        span = int(test_index.max() - test_index.min()) + 1
        tx_ext, ty_ext = tx.new_zeros(span, tx.size(1)), ty.new_zeros(span, ty.size(1))
        tx_ext[sorted_test - test_index.min()] = tx
        ty_ext[sorted_test - test_index.min()] = ty
        tx, ty = tx_ext, ty_ext
    features = torch.cat([allx, tx])
    features[test_index] = features[sorted_test]
    labels = torch.cat([ally, ty]).argmax(dim=1)
    labels[test_index] = labels[sorted_test]
    num_nodes = labels.numel()
    rows = [int(k) for k, vs in graph.items() for _ in vs]
    cols = [int(v) for vs in graph.values() for v in vs]
    edge_index = torch.tensor([rows, cols], dtype=torch.long)
    edge_index = edge_index[:, edge_index[0] != edge_index[1]]
    edge_index = torch.unique(edge_index[0] * num_nodes + edge_index[1])
    edge_index = torch.stack([edge_index // num_nodes, edge_index % num_nodes])

    def mask(index: Tensor) -> Tensor:
        out = torch.zeros(num_nodes, dtype=torch.bool)
        out[index] = True
        return out

    return Data(
        x=features,
        edge_index=edge_index,
        y=labels,
        train_mask=mask(torch.arange(y.size(0))),
        val_mask=mask(torch.arange(y.size(0), y.size(0) + 500)),
        test_mask=mask(test_index),
    )


class PlanetoidDataModule(NodeDataModule):
    r"""Cora, CiteSeer or PubMed (Yang et al., 2016): citation graphs, bag-of-words node features,
    multiclass node classification. ``split: public`` is the public Planetoid split (20 labelled nodes
    per class for training, 500 validation, 1000 test nodes), the split of Kipf & Welling (2017);
    ``split: random`` draws a random 60/20/20 split with ``split_seed``."""

    fixed_split = "public"
    version = "1"

    def __init__(self, *, download: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if self.name not in PLANETOID_NAMES:
            raise DataError(f"unknown Planetoid dataset {self.name!r}; valid: {sorted(PLANETOID_NAMES)}")
        self.download = download

    def read_graph(self) -> Data:
        return read_planetoid(self.data_dir, self.name, self.download)
