r"""OGB node property prediction on one graph (Hu et al., 2020): ogbn-arxiv, ogbn-products, ogbn-proteins.

Raw layout: that of ``ogb.nodeproppred.NodePropPredDataset(name, root=<data_dir>)`` after it
downloads and unzips ``<download_name>.zip`` (the rows of ``ogb/nodeproppred/master.csv``)::

    ogbn_arxiv/raw/edge.csv.gz                  one edge "src,dst" per line (no header)
    ogbn_arxiv/raw/num-node-list.csv.gz         the number of nodes (one graph: one line)
    ogbn_arxiv/raw/num-edge-list.csv.gz         the number of edges in edge.csv.gz
    ogbn_arxiv/raw/node-feat.csv.gz             [N, F] node features (arxiv, products)
    ogbn_proteins/raw/edge-feat.csv.gz          [E, 8] edge features (proteins)
    ogbn_arxiv/raw/node-label.csv.gz            [N, 1] class (arxiv, products) or [N, 112] 0/1 (proteins)
    ogbn_arxiv/split/time/{train,valid,test}.csv.gz   one node index per line

As OGB's reader does (``ogb.io.read_graph_raw.read_csv_graph_raw``), datasets with
``add_inverse_edge`` (products, proteins) get every edge in both directions, each edge followed by
its inverse. ogbn-arxiv is directed in the raw files; ``undirected`` adds the reverse edges and merges
duplicates, as OGB's arxiv examples do (``adj_t.to_symmetric()``).

ogbn-proteins has no node features: as OGB's example (``examples/nodeproppred/proteins/gnn.py``,
``data.x = data.adj_t.mean(dim=1)``) a node's features are the mean of the 8 features of its incident
edges, :math:`x_v = \frac{1}{\deg v} \sum_{u \in N(v)} e_{uv}` (``edge_aggr: sum`` drops the
:math:`1/\deg v`, the ``add`` aggregation of DeeperGCN's proteins example); the edge features are not
kept. Its 112 binary tasks are scored with ROC-AUC averaged over tasks (OGB's ``Evaluator``; the
registry's ``rocauc``), arxiv and products with accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.utils import index_to_mask, to_undirected

from graphbench.data.info import DataFacts, FeatureSpec
from graphbench.data.io.archives import Archive
from graphbench.data.io.raw_files import RawFile
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.base import OneGraphNodeSource
from graphbench.data.store.graph_store import GraphStore
from graphbench.vocabulary.errors import ArgumentError, DataError
from graphbench.vocabulary.splits import SPLITS


@dataclass(frozen=True)
class OGBNodeSpec:
    """One column of ``ogb/nodeproppred/master.csv``: what the raw files hold and how OGB scores them."""

    folder: str
    download_name: str
    split: str
    add_inverse_edge: bool
    num_tasks: int
    num_classes: int
    eval_metric: str
    has_node_attr: bool
    has_edge_attr: bool

    @property
    def url(self) -> str:
        return f"http://snap.stanford.edu/ogb/data/nodeproppred/{self.download_name}.zip"


OGBN_DATASETS: dict[str, OGBNodeSpec] = {
    "ogbn-arxiv": OGBNodeSpec("ogbn_arxiv", "arxiv", "time", False, 1, 40, "acc", True, False),
    "ogbn-products": OGBNodeSpec("ogbn_products", "products", "sales_ranking", True, 1, 47, "acc", True, False),
    "ogbn-proteins": OGBNodeSpec("ogbn_proteins", "proteins", "species", True, 112, 2, "rocauc", False, True),
}
EDGE_AGGREGATIONS = ("mean", "sum")
_SPLIT_FILES = {"train": "train", "val": "valid", "test": "test"}


def ogbn_raw_files(ogb_name: str) -> list[RawFile]:
    """The raw files :func:`read_ogbn` reads, in order: edge, num-node-list, num-edge-list,
    node-label, node-feat or edge-feat, then the train/valid/test split files."""
    spec = OGBN_DATASETS[ogb_name]
    features = "node-feat" if spec.has_node_attr else "edge-feat"
    raw = ["edge", "num-node-list", "num-edge-list", "node-label", features]
    return [RawFile(f"{spec.folder}/raw/{f}.csv.gz") for f in raw] + [
        RawFile(f"{spec.folder}/split/{spec.split}/{_SPLIT_FILES[s]}.csv.gz") for s in SPLITS
    ]


def _csv(path: Path, dtype: Any) -> np.ndarray:
    try:
        values = pd.read_csv(path, compression="gzip", header=None, dtype=dtype).values
        return np.require(values, requirements="W")  # torch tensors need writable memory
    except (ValueError, pd.errors.ParserError, EOFError, OSError) as exc:
        raise DataError(f"{path}: not an OGB csv.gz of {np.dtype(dtype).name} values ({exc})") from None


def aggregate_edge_features(edge: Tensor, edge_attr: Tensor, num_nodes: int, aggr: str) -> Tensor:
    r"""Node features from the features of the undirected edges ``edge`` [2, E]: every edge counts for
    both endpoints, summed (``sum``) or averaged over the incident edges (``mean``; nodes without
    edges get zeros). Equal to aggregating over the graph with both directions of every edge, without
    materializing the repeated edge features."""
    out = torch.zeros(num_nodes, edge_attr.size(1), dtype=edge_attr.dtype)
    out.index_add_(0, edge[0], edge_attr).index_add_(0, edge[1], edge_attr)
    if aggr == "mean":
        degree = torch.bincount(edge.reshape(-1), minlength=num_nodes).clamp(min=1)
        out = out / degree.unsqueeze(1).to(out.dtype)
    return out


def read_ogbn(raw: RawRoot, ogb_name: str, undirected: bool = False, edge_aggr: str = "mean") -> Data:
    """One graph as OGB builds it from its raw files (see the module docstring), with ``x``,
    ``edge_index``, ``y`` (class indices [N] for arxiv and products, float 0/1 [N, 112] for proteins)
    and OGB's split as boolean ``{split}_mask``."""
    spec = OGBN_DATASETS[ogb_name]
    archive = Archive(spec.url, f"{spec.download_name}/", spec.folder)
    paths = raw.locate(ogbn_raw_files(ogb_name), ogb_name, [archive])
    edge_path, nodes_path, edges_path, label_path, feat_path, *split_paths = paths
    edge = torch.from_numpy(_csv(edge_path, np.int64)).t().contiguous()
    num_nodes, num_edges = int(_csv(nodes_path, np.int64)[0, 0]), int(_csv(edges_path, np.int64)[0, 0])
    if edge.size(0) != 2 or edge.size(1) != num_edges or (num_edges and (int(edge.min()) < 0 or int(edge.max()) >= num_nodes)):
        raise DataError(
            f"{edge_path}: expected {num_edges} edges (num-edge-list) between {num_nodes} nodes (num-node-list), "
            f"found shape {tuple(edge.shape)}"
        )
    feat = torch.from_numpy(_csv(feat_path, np.float32))
    if spec.has_node_attr:
        if feat.size(0) != num_nodes:
            raise DataError(f"{feat_path}: expected {num_nodes} rows (one per node), found {feat.size(0)}")
        x = feat
    else:
        if feat.size(0) != num_edges:
            raise DataError(f"{feat_path}: expected {num_edges} rows (one per edge), found {feat.size(0)}")
        x = aggregate_edge_features(edge, feat, num_nodes, edge_aggr)
    label = torch.from_numpy(_csv(label_path, np.float32))
    if label.shape != (num_nodes, spec.num_tasks):
        raise DataError(f"{label_path}: expected shape ({num_nodes}, {spec.num_tasks}), found {tuple(label.shape)}")
    if spec.num_tasks == 1:
        y = label.view(-1).long()
        if y.numel() and (int(y.min()) < 0 or int(y.max()) >= spec.num_classes):
            raise DataError(f"{label_path}: {ogb_name} labels must be classes 0..{spec.num_classes - 1}")
    else:
        y = label
    if spec.add_inverse_edge:  # OGB's order: every edge, then its inverse
        edge = torch.stack([edge, edge.flip(0)], dim=2).reshape(2, -1)
    if undirected:
        edge = to_undirected(edge, num_nodes=num_nodes)
    masks = {}
    for split, path in zip(SPLITS, split_paths):
        index = torch.from_numpy(_csv(path, np.int64)).view(-1)
        if index.numel() and (int(index.min()) < 0 or int(index.max()) >= num_nodes):
            raise DataError(f"{path}: node indices outside 0..{num_nodes - 1}")
        masks[f"{split}_mask"] = index_to_mask(index, size=num_nodes)
    return Data(x=x, edge_index=edge, y=y, **masks)


class OGBNodeProperty(OneGraphNodeSource):
    r"""An OGB node property prediction dataset with OGB's split (the fixed split ``official``).

    ``ogbn-arxiv``: 169,343 papers, 1,166,243 citations, 128-d features, 40 subject areas, split by
    year (train up to 2017, valid 2018, test 2019). ``ogbn-products``: 2,449,029 Amazon products,
    61,859,140 co-purchase edges (both directions), 100-d features, 47 categories, split by sales
    rank (top 8% train, next 2% valid, rest test). ``ogbn-proteins``: 132,534 proteins, 39,561,252
    associations (both directions) with 8 features, 112 binary function labels, split by species.
    The feature width is read from the data; the number of outputs is OGB's (classes or tasks)."""

    fixed_split = "official"

    def __init__(self, *, ogb_name: str, undirected: bool = False, edge_aggr: str = "mean") -> None:
        if ogb_name not in OGBN_DATASETS:
            raise ArgumentError(f"ogb_name={ogb_name!r} is not supported; valid: {sorted(OGBN_DATASETS)}")
        if edge_aggr not in EDGE_AGGREGATIONS:
            raise ArgumentError(f"edge_aggr={edge_aggr!r} is not valid; valid: {list(EDGE_AGGREGATIONS)}")
        self.ogb_name = ogb_name
        self.spec = OGBN_DATASETS[ogb_name]
        self.undirected = bool(undirected)
        self.edge_aggr = edge_aggr

    def cache_params(self) -> tuple[Any, ...]:
        return (self.ogb_name, self.undirected, self.edge_aggr if self.spec.has_edge_attr else None)

    def facts(self, store: GraphStore | None = None) -> DataFacts | None:
        if store is None:
            return None
        num_outputs = self.spec.num_classes if self.spec.num_tasks == 1 else self.spec.num_tasks
        dim = int(store.collated.x.size(1))
        return DataFacts(num_outputs=num_outputs, node_features=FeatureSpec("dense", dim=dim), edge_features=None)

    def read_graph(self, raw: RawRoot) -> Data:
        return read_ogbn(raw, self.ogb_name, self.undirected, self.edge_aggr)
