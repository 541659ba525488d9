r"""The large node-classification graphs of the sampling papers, with their official splits.

**Flickr** (Zeng et al., 2020, GraphSAINT): 89,250 images, 899,756 edges, 500-d features, 7 classes,
split 50% / 25% / 25%. GraphSAINT's raw layout, as ``torch_geometric.datasets.Flickr`` reads it::

    Flickr/raw/adj_full.npz     CSR adjacency (data, indices, indptr, shape), both directions
    Flickr/raw/feats.npy        [N, 500] float features
    Flickr/raw/class_map.json   {"node id": class}
    Flickr/raw/role.json        {"tr": [...], "va": [...], "te": [...]} node ids of each split

**Reddit** (Hamilton et al., 2017, GraphSAGE): 232,965 posts, 114,615,892 edges, 602-d features,
41 communities, split by posting day. The layout of ``torch_geometric.datasets.Reddit`` (DGL's
``reddit.zip``)::

    Reddit/raw/reddit_data.npz   'feature' [N, 602], 'label' [N], 'node_types' [N] (1 train, 2 val, 3 test)
    Reddit/raw/reddit_graph.npz  scipy COO adjacency (``scipy.sparse.save_npz``)

Both read with ``allow_pickle=False``; edges as PyG reads them (Flickr: the CSR's row-major order;
Reddit: coalesced).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.utils import coalesce, index_to_mask

from graphbench.data.io.archives import Archive
from graphbench.data.io.raw_files import RawFile
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.base import OneGraphNodeSource
from graphbench.vocabulary.errors import DataError

_GOOGLE = "https://drive.usercontent.google.com/download?id={}&confirm=t"
#: the Google Drive ids of GraphSAINT's Flickr files, as in ``torch_geometric.datasets.Flickr``
FLICKR_FILES = [
    RawFile("Flickr/raw/adj_full.npz", url=_GOOGLE.format("1crmsTbd1-2sEXsGwa2IKnIB7Zd3TmUsy")),
    RawFile("Flickr/raw/feats.npy", url=_GOOGLE.format("1join-XdvX3anJU_MLVtick7MgeAQiWIZ")),
    RawFile("Flickr/raw/class_map.json", url=_GOOGLE.format("1uxIkbtg5drHTsKt-PAsZZ4_yJmgFmle9")),
    RawFile("Flickr/raw/role.json", url=_GOOGLE.format("1htXCtuktuCW8TR8KiKfrFDAxUgekQoV7")),
]
REDDIT_FILES = [RawFile("Reddit/raw/reddit_data.npz"), RawFile("Reddit/raw/reddit_graph.npz")]
REDDIT_ARCHIVE = Archive("https://data.dgl.ai/dataset/reddit.zip", "", "Reddit/raw")


def _npz(path: Path, keys: tuple[str, ...]) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as handle:
            missing = [k for k in keys if k not in handle.files]
            if missing:
                raise DataError(f"{path}: missing arrays {missing} (found {sorted(handle.files)})")
            return {k: handle[k] for k in keys}
    except (ValueError, OSError, zipfile.BadZipFile) as exc:
        raise DataError(f"{path}: not a numpy .npz file readable without pickles ({exc})") from None


def _json(path: Path) -> Any:
    try:
        return json.loads(Path(path).read_text())
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not valid JSON ({exc})") from None


def _check_nodes(path: Path, index: Tensor, num_nodes: int) -> Tensor:
    if index.numel() and (int(index.min()) < 0 or int(index.max()) >= num_nodes):
        raise DataError(f"{path}: node ids outside 0..{num_nodes - 1}")
    return index


def read_flickr(raw: RawRoot) -> Data:
    """Flickr as ``torch_geometric.datasets.Flickr`` builds it (unlabelled nodes would get ``-1``)."""
    adj_path, feats_path, class_path, role_path = raw.locate(FLICKR_FILES, "Flickr")
    adj = _npz(adj_path, ("indices", "indptr", "shape"))
    num_nodes = int(adj["shape"][0])
    indptr = torch.from_numpy(adj["indptr"].astype(np.int64))
    if indptr.numel() != num_nodes + 1:
        raise DataError(f"{adj_path}: indptr must have {num_nodes + 1} entries, found {indptr.numel()}")
    row = torch.repeat_interleave(torch.arange(num_nodes), indptr.diff())
    col = _check_nodes(adj_path, torch.from_numpy(adj["indices"].astype(np.int64)), num_nodes)
    try:
        x = torch.from_numpy(np.load(feats_path, allow_pickle=False)).float()
    except (ValueError, OSError) as exc:
        raise DataError(f"{feats_path}: not a numpy .npy array readable without pickles ({exc})") from None
    if x.dim() != 2 or x.size(0) != num_nodes:
        raise DataError(f"{feats_path}: expected {num_nodes} rows of features, found shape {tuple(x.shape)}")
    y = torch.full((num_nodes,), -1, dtype=torch.long)
    class_map = _json(class_path)
    nodes = _check_nodes(class_path, torch.tensor([int(k) for k in class_map], dtype=torch.long), num_nodes)
    y[nodes] = torch.tensor([int(v) for v in class_map.values()], dtype=torch.long)
    role = _json(role_path)
    masks = {}
    for split, key in (("train", "tr"), ("val", "va"), ("test", "te")):
        if key not in role:
            raise DataError(f"{role_path}: missing '{key}' (GraphSAINT's role.json has 'tr', 'va', 'te')")
        index = _check_nodes(role_path, torch.tensor(role[key], dtype=torch.long), num_nodes)
        masks[f"{split}_mask"] = index_to_mask(index, size=num_nodes)
    return Data(x=x, edge_index=torch.stack([row, col]), y=y, **masks)


def read_reddit(raw: RawRoot) -> Data:
    """Reddit as ``torch_geometric.datasets.Reddit`` builds it."""
    import scipy.sparse as sp

    data_path, graph_path = raw.locate(REDDIT_FILES, "Reddit", [REDDIT_ARCHIVE])
    arrays = _npz(data_path, ("feature", "label", "node_types"))
    x = torch.from_numpy(arrays["feature"]).float()
    y = torch.from_numpy(arrays["label"]).long()
    node_types = torch.from_numpy(arrays["node_types"])
    num_nodes = x.size(0)
    if y.shape != (num_nodes,) or node_types.shape != (num_nodes,):
        raise DataError(f"{data_path}: 'label' and 'node_types' must have one entry per row of 'feature' ({num_nodes})")
    try:
        adj = sp.load_npz(graph_path).tocoo()  # scipy's reader: np.load without pickles
    except (ValueError, OSError, KeyError, zipfile.BadZipFile) as exc:
        raise DataError(f"{graph_path}: not a scipy sparse .npz ({exc})") from None
    if adj.shape != (num_nodes, num_nodes):
        raise DataError(f"{graph_path}: adjacency of shape {adj.shape}, expected ({num_nodes}, {num_nodes})")
    edge_index = torch.stack([torch.from_numpy(adj.row).long(), torch.from_numpy(adj.col).long()])
    edge_index = coalesce(edge_index, num_nodes=num_nodes)
    return Data(x=x, edge_index=edge_index, y=y, train_mask=node_types == 1, val_mask=node_types == 2, test_mask=node_types == 3)


class Flickr(OneGraphNodeSource):
    r"""Flickr (Zeng et al., 2020): images sharing properties, 7 classes, GraphSAINT's split (``official``)."""

    fixed_split = "official"

    def read_graph(self, raw: RawRoot) -> Data:
        return read_flickr(raw)


class Reddit(OneGraphNodeSource):
    r"""Reddit (Hamilton et al., 2017): posts linked when a user commented on both, 41 communities,
    GraphSAGE's split by day (``official``)."""

    fixed_split = "official"

    def read_graph(self, raw: RawRoot) -> Data:
        return read_reddit(raw)
