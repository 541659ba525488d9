"""TU graph classification datasets (Morris et al., 2020) with 10-fold cross-validation.

Raw layout (that of ``torch_geometric.datasets.TUDataset(root=<data_dir>/TUDataset, name)``)::

    TUDataset/<NAME>/raw/<NAME>_A.txt                 "row, col" per edge (1-based global node ids)
    TUDataset/<NAME>/raw/<NAME>_graph_indicator.txt   graph id (1-based) of every node
    TUDataset/<NAME>/raw/<NAME>_graph_labels.txt      class of every graph
    optional: _node_labels.txt, _node_attributes.txt, _edge_labels.txt

Folds: the fixed Benchmarking-GNNs index files ``benchmarking-gnns/TUs/<PREFIX>_{train,val,test}.index``
(one fold per line) where they exist, else a seeded stratified 10-fold split (80/10/10).
"""

from __future__ import annotations

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
from graphbench.data.splits import check_split_index, fold_from_index_files, stratified_cv_fold
from graphbench.data.store.collate import collate_concatenated
from graphbench.data.store.graph_store import GraphStore
from graphbench.vocabulary.errors import DataError
from graphbench.vocabulary.splits import SPLITS

NUM_FOLDS = 10
TU_URL = "https://www.chrsmrrs.com/graphkerneldatasets/{}.zip"
FOLD_URL = "https://raw.githubusercontent.com/graphdeeplearning/benchmarking-gnns/master/data/TUs/{}_{}.index"
REQUIRED = ("A", "graph_indicator", "graph_labels")
#: the optional files each known dataset publishes (all must be present, so features never silently change)
TU_OPTIONAL: dict[str, tuple[str, ...]] = {
    "ENZYMES": ("node_labels", "node_attributes"),
    "PROTEINS": ("node_labels", "node_attributes"),
    "MUTAG": ("node_labels", "edge_labels"),
    "AIDS": ("node_labels", "node_attributes", "edge_labels"),
    "DD": ("node_labels",),
}


def read_txt(path: Path, dtype: type) -> np.ndarray:
    """A comma-separated TU text file as a 2-D array (one row per line)."""
    try:
        return np.loadtxt(path, delimiter=",", dtype=dtype, ndmin=2)
    except ValueError as exc:
        raise DataError(f"{path}: not a comma-separated table of numbers ({exc})") from None


def one_hot_columns(labels: np.ndarray) -> np.ndarray:
    """One-hot of every label column after subtracting its minimum, concatenated (PyG's TU reading)."""
    labels = labels - labels.min(axis=0)
    return np.concatenate([np.eye(int(col.max()) + 1, dtype=np.float32)[col] for col in labels.T], axis=1)


def read_tu(
    raw_dir: Path, name: str, files: tuple[str, ...], use_node_attr: bool, use_node_labels: bool = True
) -> tuple[Any, dict[str, Tensor], np.ndarray]:
    """Read a TU dataset: returns ``(data, slices)`` and the graph labels (class ids 0..C-1).

    ``x`` = [node attributes (if ``use_node_attr``), one-hot node labels (if ``use_node_labels``)] (float),
    or a constant column when there is neither; ``edge_attr`` = edge labels shifted to start at 0 (long, categorical). Self
    loops and duplicate edges are dropped; edges are sorted by (source, target) as PyG's ``coalesce`` does.
    """

    def path(kind: str) -> Path:
        return raw_dir / f"{name}_{kind}.txt"

    graph_of_node = read_txt(path("graph_indicator"), np.int64)[:, 0] - 1
    num_graphs = int(graph_of_node.max()) + 1 if graph_of_node.size else 0
    if np.any(np.diff(graph_of_node) < 0) or graph_of_node.min(initial=0) < 0:
        raise DataError(f"{path('graph_indicator')}: graph ids must be >= 1 and non-decreasing")
    num_nodes = np.bincount(graph_of_node, minlength=num_graphs)
    edges = read_txt(path("A"), np.int64) - 1
    if edges.shape[1] != 2 or edges.min(initial=0) < 0 or edges.max(initial=0) >= len(graph_of_node):
        raise DataError(f"{path('A')}: expected 'row, col' pairs of node ids in 1..{len(graph_of_node)}")
    edge_labels = read_txt(path("edge_labels"), np.int64) if "edge_labels" in files else None
    if edge_labels is not None and len(edge_labels) != len(edges):
        raise DataError(f"{path('edge_labels')}: {len(edge_labels)} lines for {len(edges)} edges")
    keep = edges[:, 0] != edges[:, 1]
    order = np.lexsort((edges[keep, 1], edges[keep, 0]))
    kept = np.flatnonzero(keep)[order]
    sorted_edges = edges[kept]
    first = np.ones(len(sorted_edges), dtype=bool)
    first[1:] = np.any(sorted_edges[1:] != sorted_edges[:-1], axis=1)
    kept, sorted_edges = kept[first], sorted_edges[first]
    graph_of_edge = graph_of_node[sorted_edges[:, 0]]
    if np.any(graph_of_edge != graph_of_node[sorted_edges[:, 1]]):
        raise DataError(f"{path('A')}: an edge joins nodes of two different graphs")
    node_ptr = np.concatenate([[0], np.cumsum(num_nodes)])
    local = (sorted_edges - node_ptr[graph_of_edge][:, None]).T

    parts = []
    if use_node_attr and "node_attributes" in files:
        parts.append(read_txt(path("node_attributes"), np.float32))
    if use_node_labels and "node_labels" in files:
        parts.append(one_hot_columns(read_txt(path("node_labels"), np.int64)))
    for part in parts:
        if len(part) != len(graph_of_node):
            raise DataError(f"{raw_dir}: a node file has {len(part)} lines for {len(graph_of_node)} nodes")
    x = torch.from_numpy(np.concatenate(parts, axis=1)) if parts else torch.zeros(len(graph_of_node), 1, dtype=torch.long)
    edge: dict[str, Tensor] = {}
    if edge_labels is not None:
        edge["edge_attr"] = torch.from_numpy(edge_labels[kept] - edge_labels.min(axis=0))
    raw_labels = read_txt(path("graph_labels"), np.int64)[:, 0]
    if len(raw_labels) != num_graphs:
        raise DataError(f"{path('graph_labels')}: {len(raw_labels)} labels for {num_graphs} graphs")
    _, labels = np.unique(raw_labels, return_inverse=True)
    data, slices = collate_concatenated(
        torch.from_numpy(num_nodes),
        torch.from_numpy(np.bincount(graph_of_edge, minlength=num_graphs)),
        torch.from_numpy(np.ascontiguousarray(local)),
        {"x": x},
        edge,
        {"y": torch.from_numpy(labels.astype(np.int64))},
    )
    return (data, slices), labels


class TUDataset(Source):
    r"""A TU dataset (e.g. ENZYMES, PROTEINS, MUTAG, AIDS, DD) as multiclass graph classification
    scored by accuracy, on fold ``split_index`` (0..9) of a 10-fold cross-validation.

    ``fold_files``: prefix of the Benchmarking-GNNs index files (``ENZYMES``, ``PROTEINS_full``,
    ``DD``), or ``null`` for a stratified 10-fold split drawn with ``fold_seed`` (test = fold k,
    val = fold k+1, train = the rest). ``PROTEINS_full`` indexes the same 1,113 graphs in the same
    order as PROTEINS (only the node attributes differ), so its folds serve PROTEINS.
    Node features: node attributes (``use_node_attr``) and one-hot node labels (``use_node_labels``;
    dense); edge labels become categorical edge features. Benchmarking GNNs' loader (DGL's
    ``LegacyTUDataset``) lets the attributes replace the labels: ``use_node_attr=true,
    use_node_labels=false`` on a dataset with attributes. The number of classes and the feature widths are read from
    the data (:meth:`facts` needs the set-up store). ``name`` names the dataset in error messages."""

    def __init__(
        self,
        *,
        tu_name: str,
        split_index: int = 0,
        fold_files: str | None = None,
        fold_seed: int = 0,
        use_node_attr: bool = False,
        use_node_labels: bool = True,
        name: str | None = None,
    ) -> None:
        self.split_index = check_split_index(split_index, NUM_FOLDS, name or tu_name)
        self.tu_name = tu_name
        self.fold_files = fold_files
        self.fold_seed = fold_seed
        self.use_node_attr = use_node_attr
        self.use_node_labels = use_node_labels

    def cache_params(self) -> tuple[Any, ...]:
        labels = () if self.use_node_labels else ("no node labels",)  # the default keeps the caches already built
        return (self.tu_name, self.use_node_attr, self.fold_files, self.split_index, self.fold_seed, *labels)

    def facts(self, store: GraphStore | None = None) -> DataFacts | None:
        if store is None:
            return None
        data = store.collated
        node = FeatureSpec("dense", dim=data.x.size(1)) if data.x.is_floating_point() else FeatureSpec("constant")
        edge = None
        if data.edge_attr is not None:
            edge = FeatureSpec("categorical", cardinalities=tuple(int(c) + 1 for c in data.edge_attr.max(dim=0).values))
        return DataFacts(num_outputs=int(data.y.max()) + 1, node_features=node, edge_features=edge)

    def _files(self, raw: RawRoot) -> tuple[list[RawFile], tuple[str, ...]]:
        folder = f"TUDataset/{self.tu_name}/raw"
        optional = TU_OPTIONAL.get(self.tu_name)
        if optional is None:  # an unknown TU dataset: use whichever optional files are there
            kinds = ("node_labels", "node_attributes", "edge_labels")
            optional = tuple(k for k in kinds if raw.path(f"{folder}/{self.tu_name}_{k}.txt").exists())
        kinds = REQUIRED + optional
        files = [RawFile(f"{folder}/{self.tu_name}_{k}.txt") for k in kinds]
        if self.fold_files:
            files += [
                RawFile(f"benchmarking-gnns/TUs/{self.fold_files}_{s}.index", url=FOLD_URL.format(self.fold_files, s))
                for s in SPLITS
            ]
        return files, kinds

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, Tensor]]:
        files, kinds = self._files(raw)
        archive = Archive(TU_URL.format(self.tu_name), f"{self.tu_name}/", f"TUDataset/{self.tu_name}/raw")
        paths = raw.locate(files, f"TU {self.tu_name}", [archive])
        (data, slices), labels = read_tu(paths[0].parent, self.tu_name, kinds, self.use_node_attr, self.use_node_labels)
        if self.fold_files:
            index_paths = dict(zip(SPLITS, paths[len(kinds) :]))
            splits = fold_from_index_files(index_paths, self.split_index, NUM_FOLDS, len(labels))
        else:
            splits = stratified_cv_fold(labels, self.split_index, NUM_FOLDS, self.fold_seed)
        return GraphStore(data, slices), splits
