"""Planetoid citation graphs Cora, CiteSeer, PubMed (Yang et al., 2016) in their official raw format."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch_geometric.data import Data
from torch_geometric.utils import coalesce, index_to_mask, remove_self_loops

from graphbench.data.io.raw_files import RawFile
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.io.safe_load import load_planetoid_pickle
from graphbench.data.sources.base import OneGraphNodeSource
from graphbench.vocabulary.errors import DataError

PLANETOID_NAMES: dict[str, str] = {"cora": "Cora", "citeseer": "CiteSeer", "pubmed": "PubMed"}
PLANETOID_PARTS: tuple[str, ...] = ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index")
_URL = "https://github.com/kimiyoung/planetoid/raw/master/data"


def planetoid_raw_files(name: str) -> list[RawFile]:
    """``Planetoid/<Name>/raw/ind.<name>.<part>``, the layout of ``torch_geometric.datasets.Planetoid``."""
    if name not in PLANETOID_NAMES:
        raise DataError(f"unknown Planetoid dataset {name!r}; valid: {sorted(PLANETOID_NAMES)}")
    folder = PLANETOID_NAMES[name]
    return [RawFile(f"Planetoid/{folder}/raw/ind.{name}.{part}", url=f"{_URL}/ind.{name}.{part}") for part in PLANETOID_PARTS]


def read_planetoid(raw: RawRoot, name: str) -> Data:
    r"""One graph with the public Planetoid split, exactly as ``torch_geometric.datasets.Planetoid``:
    training nodes are the first ``len(y)`` nodes, validation the next 500, test the nodes in
    ``test.index``; test rows are reordered by ``test.index``; CiteSeer's isolated test nodes (missing
    from ``tx``) get zero features and label 0 outside every mask; self-loops are removed and
    duplicate edges merged."""
    paths = dict(zip(PLANETOID_PARTS, raw.locate(planetoid_raw_files(name), PLANETOID_NAMES[name])))
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
    edge_index, _ = remove_self_loops(torch.tensor([rows, cols], dtype=torch.long))
    return Data(
        x=features,
        edge_index=coalesce(edge_index, num_nodes=num_nodes),
        y=labels,
        train_mask=index_to_mask(torch.arange(y.size(0)), size=num_nodes),
        val_mask=index_to_mask(torch.arange(y.size(0), y.size(0) + 500), size=num_nodes),
        test_mask=index_to_mask(test_index, size=num_nodes),
    )


class Planetoid(OneGraphNodeSource):
    r"""Cora, CiteSeer or PubMed (Yang et al., 2016): citation graphs, bag-of-words node features,
    multiclass node classification. The fixed split ``public`` is the public Planetoid split (20
    labelled nodes per class for training, 500 validation, 1000 test nodes), the split of Kipf &
    Welling (2017)."""

    fixed_split = "public"

    def __init__(self, *, name: str) -> None:
        if name not in PLANETOID_NAMES:
            raise DataError(f"unknown Planetoid dataset {name!r}; valid: {sorted(PLANETOID_NAMES)}")
        self.name = name

    def cache_params(self) -> tuple[Any, ...]:
        return (self.name,)

    def read_graph(self, raw: RawRoot) -> Data:
        return read_planetoid(raw, self.name)
