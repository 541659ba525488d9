"""OGB link property prediction on one graph (ogbl-collab; Hu et al., 2020), in OGB's raw layout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import Tensor
from torch_geometric.data import Data

from graphbench.data.info import DataFacts, FeatureSpec
from graphbench.data.io.raw_files import RawFile
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.io.safe_load import load_torch_file, numpy_safe_globals
from graphbench.data.sources.base import Source
from graphbench.data.store.graph_store import GraphStore
from graphbench.vocabulary.errors import ArgumentError, DataError
from graphbench.vocabulary.splits import SPLITS

#: OGB dataset -> (folder, split type, extra edge files): the rows of ogb/linkproppred/master.csv used here
OGBL_DATASETS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "ogbl-collab": ("ogbl_collab", "time", ("edge_weight", "edge_year")),
}
_SPLIT_FILES = {"train": "train.pt", "val": "valid.pt", "test": "test.pt"}


def ogbl_raw_files(ogb_name: str) -> list[RawFile]:
    """``<folder>/raw/{edge,node-feat,num-node-list,num-edge-list,<extra>}.csv.gz`` and
    ``<folder>/split/<type>/{train,valid,test}.pt``: the layout ``PygLinkPropPredDataset`` unpacks."""
    folder, split_type, extra = OGBL_DATASETS[ogb_name]
    raw = ["edge", "node-feat", "num-node-list", "num-edge-list", *extra]
    return [RawFile(f"{folder}/raw/{f}.csv.gz") for f in raw] + [
        RawFile(f"{folder}/split/{split_type}/{f}") for f in _SPLIT_FILES.values()
    ]


def _csv(path: Path, dtype: Any) -> np.ndarray:
    return pd.read_csv(path, compression="gzip", header=None).values.astype(dtype)


def _pairs(split: dict[str, Any], key: str, path: Path) -> Tensor:
    if key not in split:
        raise DataError(f"{path}: missing '{key}' (found {sorted(split)})")
    pairs = torch.as_tensor(np.asarray(split[key]), dtype=torch.long)
    if pairs.dim() != 2 or pairs.size(1) != 2:
        raise DataError(f"{path}: '{key}' must have shape [E, 2], got {tuple(pairs.shape)}")
    return pairs.t().contiguous()


def read_ogbl(raw: RawRoot, ogb_name: str) -> Data:
    r"""One graph as ``PygLinkPropPredDataset`` builds it (``add_inverse_edge``: both directions),
    plus the split edges: ``train_pos``, ``val_pos``, ``val_neg``, ``test_pos``, ``test_neg`` [2, E] and
    ``val_pos_attr`` (weight, year) [E, 2] for using validation edges as input."""
    paths = raw.locate(ogbl_raw_files(ogb_name), ogb_name)
    extra = OGBL_DATASETS[ogb_name][2]
    edge = torch.from_numpy(_csv(paths[0], np.int64)).t()
    x = torch.from_numpy(_csv(paths[1], np.float32))
    num_nodes, num_edges = int(_csv(paths[2], np.int64)[0, 0]), int(_csv(paths[3], np.int64)[0, 0])
    if x.size(0) != num_nodes or edge.size(1) != num_edges or (edge.numel() and int(edge.max()) >= num_nodes):
        raise DataError(f"{ogb_name}: edge.csv.gz / node-feat.csv.gz disagree with num-node-list / num-edge-list")
    attr = torch.cat([torch.from_numpy(_csv(p, np.float32)).view(num_edges, -1) for p in paths[4 : 4 + len(extra)]], dim=1)
    data = Data(x=x, edge_index=torch.cat([edge, edge.flip(0)], dim=1), edge_attr=torch.cat([attr, attr]), num_nodes=num_nodes)
    splits = {name: load_torch_file(p, "a valid OGB split file", numpy_safe_globals) for name, p in zip(_SPLIT_FILES, paths[-3:])}
    data.train_pos = _pairs(splits["train"], "edge", paths[-3])
    for name, path in zip(("val", "test"), paths[-2:]):
        data[f"{name}_pos"] = _pairs(splits[name], "edge", path)
        data[f"{name}_neg"] = _pairs(splits[name], "edge_neg", path)
    val = splits["val"]
    data.val_pos_attr = torch.stack(
        [torch.as_tensor(np.asarray(val[k]), dtype=torch.float).view(-1) for k in ("weight", "year")], 1
    )
    return data


class OGBLinkProperty(Source):
    r"""Link prediction on one graph with OGB's edge split, e.g. ogbl-collab (authors, collaborations
    up to 2017; validation 2018, test 2019) scored by Hits@50 against OGB's fixed negatives.
    ``edge_features``: ``[]`` (OGB's node-only setting) or ``[weight, year]`` (Benchmarking GNNs'
    COLLAB): the columns of ``edge_attr`` (and of the validation edges' ``val_pos_attr``) kept.
    The node feature width is read from the data (:meth:`facts` needs the set-up store)."""

    level = "link"
    one_graph = True

    def __init__(self, *, ogb_name: str = "ogbl-collab", edge_features: list[str] | tuple[str, ...] = ()) -> None:
        if ogb_name not in OGBL_DATASETS:
            raise ArgumentError(f"ogb_name={ogb_name!r} is not supported; valid: {sorted(OGBL_DATASETS)}")
        unknown = sorted(set(edge_features) - {"weight", "year"})
        if unknown:
            raise ArgumentError(f"edge_features {unknown} unknown; valid: ['weight', 'year']")
        self.ogb_name = ogb_name
        self.edge_features = list(edge_features)

    def facts(self, store: GraphStore | None = None) -> DataFacts | None:
        if store is None:
            return None
        edges = FeatureSpec("dense", dim=len(self.edge_features)) if self.edge_features else None
        return DataFacts(
            num_outputs=1, node_features=FeatureSpec("dense", dim=int(store.collated.x.size(1))), edge_features=edges
        )

    def cache_params(self) -> tuple[Any, ...]:
        return (self.ogb_name, self.edge_features)

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, Tensor]]:
        graph = read_ogbl(raw, self.ogb_name)
        columns = [{"weight": 0, "year": 1}[f] for f in self.edge_features]
        graph.val_pos_attr = graph.val_pos_attr[:, columns]
        if columns:
            graph.edge_attr = graph.edge_attr[:, columns]
        else:
            del graph.edge_attr
        one = torch.zeros(1, dtype=torch.long)
        return GraphStore.from_list([graph]), {s: one for s in SPLITS}
