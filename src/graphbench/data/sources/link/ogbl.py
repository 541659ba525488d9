"""OGB link property prediction on one graph (ogbl-collab; Hu et al., 2020), in OGB's raw layout."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import torch
from torch import Tensor
from torch.utils.data import DataLoader
from torch_geometric.data import Data

from graphbench.data.datamodules.graph_level import SPLITS, GraphDataModule
from graphbench.data.store.graph_store import GraphStore
from graphbench.info import DatasetInfo, FeatureSpec
from graphbench.data.io.raw_files import RawFile, ensure_raw_files
from graphbench.errors import ConfigError, DataError

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
    return [RawFile(f"{folder}/raw/{f}.csv.gz") for f in raw] + [RawFile(f"{folder}/split/{split_type}/{f}") for f in _SPLIT_FILES.values()]


def _csv(path: Path, dtype: Any) -> np.ndarray:
    return pd.read_csv(path, compression="gzip", header=None).values.astype(dtype)


def load_numpy_torch_file(path: Path) -> Any:
    """``torch.load`` of an OGB split file (dicts of numpy arrays) with ``weights_only=True``: only
    the numpy globals those files need are allowed, never arbitrary code."""
    from numpy._core.multiarray import _reconstruct

    allowed = [
        _reconstruct, (_reconstruct, "numpy.core.multiarray._reconstruct"), np.ndarray, np.dtype,
        *(type(np.dtype(t)) for t in ("int64", "int32", "float64", "float32", "bool")),
    ]
    try:
        with torch.serialization.safe_globals(allowed):
            return torch.load(path, weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any failure means: not an OGB split file
        raise DataError(f"{path}: not a valid OGB split file ({type(exc).__name__}: {exc})") from exc


def _pairs(split: dict[str, Any], key: str, path: Path) -> Tensor:
    if key not in split:
        raise DataError(f"{path}: missing '{key}' (found {sorted(split)})")
    pairs = torch.as_tensor(np.asarray(split[key]), dtype=torch.long)
    if pairs.dim() != 2 or pairs.size(1) != 2:
        raise DataError(f"{path}: '{key}' must have shape [E, 2], got {tuple(pairs.shape)}")
    return pairs.t().contiguous()


def read_ogbl(data_dir: Path, ogb_name: str, download: bool = False) -> Data:
    r"""One graph as ``PygLinkPropPredDataset`` builds it (``add_inverse_edge``: both directions),
    plus the split edges: ``train_pos``, ``val_pos``, ``val_neg``, ``test_pos``, ``test_neg`` [2, E] and
    ``val_pos_attr`` (weight, year) [E, 2] for using validation edges as input."""
    paths = ensure_raw_files(data_dir, ogbl_raw_files(ogb_name), ogb_name, download)
    extra = OGBL_DATASETS[ogb_name][2]
    edge = torch.from_numpy(_csv(paths[0], np.int64)).t()
    x = torch.from_numpy(_csv(paths[1], np.float32))
    num_nodes, num_edges = int(_csv(paths[2], np.int64)[0, 0]), int(_csv(paths[3], np.int64)[0, 0])
    if x.size(0) != num_nodes or edge.size(1) != num_edges or (edge.numel() and int(edge.max()) >= num_nodes):
        raise DataError(f"{ogb_name}: edge.csv.gz / node-feat.csv.gz disagree with num-node-list / num-edge-list")
    attr = torch.cat([torch.from_numpy(_csv(p, np.float32)).view(num_edges, -1) for p in paths[4 : 4 + len(extra)]], dim=1)
    data = Data(x=x, edge_index=torch.cat([edge, edge.flip(0)], dim=1), edge_attr=torch.cat([attr, attr]), num_nodes=num_nodes)
    splits = {name: load_numpy_torch_file(p) for name, p in zip(_SPLIT_FILES, paths[-3:])}
    data.train_pos = _pairs(splits["train"], "edge", paths[-3])
    for name, path in zip(("val", "test"), paths[-2:]):
        data[f"{name}_pos"] = _pairs(splits[name], "edge", path)
        data[f"{name}_neg"] = _pairs(splits[name], "edge_neg", path)
    val = splits["val"]
    data.val_pos_attr = torch.stack([torch.as_tensor(np.asarray(val[k]), dtype=torch.float).view(-1) for k in ("weight", "year")], 1)
    return data


class _LinkBatches:
    """Collate function: indices into a split's labelled pairs -> the full graph plus those pairs
    (``edge_label_index``, ``edge_label``, ``edge_label_id``)."""

    def __init__(self, graph: Data, pairs: Tensor, labels: Tensor) -> None:
        self.graph, self.pairs, self.labels = graph, pairs, labels

    def __call__(self, index: list[int]) -> Data:
        ids = torch.as_tensor(index, dtype=torch.long)
        batch = self.graph.clone()
        batch.edge_label_index, batch.edge_label, batch.edge_label_id = self.pairs[:, ids], self.labels[ids], ids
        return batch


class OGBLinkDataModule(GraphDataModule):
    r"""Link prediction on one graph with OGB's edge split, e.g. ogbl-collab (authors, collaborations
    up to 2017; validation 2018, test 2019) scored by Hits@50 against OGB's fixed negatives.

    Training batches hold the whole training graph (message passing) and ``batch_size`` positive
    training pairs (``edge_label_index``); the task module samples negatives. Evaluation batches hold
    ``eval_batch_size`` (``null``: all) of the split's positive and negative pairs with their labels.
    ``use_val_edges_as_input`` adds validation edges to the message-passing graph at test time (allowed
    by OGB's rules for collab). ``edge_features``: ``[]`` (OGB's node-only setting) or
    ``[weight, year]`` (Benchmarking GNNs' COLLAB)."""

    version = "1"

    def __init__(
        self,
        *,
        ogb_name: str = "ogbl-collab",
        edge_features: list[str] | tuple[str, ...] = (),
        use_val_edges_as_input: bool = False,
        eval_batch_size: int | None = None,
        download: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if ogb_name not in OGBL_DATASETS:
            raise ConfigError(f"dataset.ogb_name={ogb_name!r} is not supported; valid: {sorted(OGBL_DATASETS)}")
        unknown = sorted(set(edge_features) - {"weight", "year"})
        if unknown:
            raise ConfigError(f"dataset.edge_features {unknown} unknown; valid: ['weight', 'year']")
        self.ogb_name = ogb_name
        self.edge_features = list(edge_features)
        self.use_val_edges_as_input = use_val_edges_as_input
        self.eval_batch_size = eval_batch_size
        self.download = download
        self.graph: Data | None = None

    @property
    def info(self) -> DatasetInfo:
        if self.graph is None:
            self.setup()
        assert self.graph is not None
        edges = FeatureSpec("dense", dim=len(self.edge_features)) if self.edge_features else None
        return self.make_info(num_outputs=1, node_features=FeatureSpec("dense", dim=int(self.graph.x.size(1))), edge_features=edges, level="link")

    def cache_params(self) -> tuple[Any, ...]:
        return (self.name, self.ogb_name)

    def build(self) -> tuple[GraphStore, dict[str, Tensor]]:
        one = torch.zeros(1, dtype=torch.long)
        return GraphStore.from_list([read_ogbl(self.data_dir, self.ogb_name, self.download)]), {s: one for s in SPLITS}

    def setup(self, stage: str | None = None) -> None:
        if self.graph is not None:
            return
        super().setup(stage)
        assert self.dataset is not None
        graph = self.dataset.get(0)
        columns = [{"weight": 0, "year": 1}[f] for f in self.edge_features]
        self.split_edges = {k: graph[k] for k in ("train_pos", "val_pos", "val_neg", "test_pos", "test_neg")}
        self.val_pos_attr = graph.val_pos_attr[:, columns]
        # everything but the split edges (positional encodings included) is message-passing input
        keep = {k: graph[k] for k in graph.keys() if k not in (*self.split_edges, "val_pos_attr", "idx", "num_nodes")}
        keep["edge_attr"] = graph.edge_attr[:, columns] if columns else None
        self.graph = Data(**keep, num_nodes=graph.num_nodes)

    def _message_passing_graph(self, split: str) -> Data:
        assert self.graph is not None
        if split != "test" or not self.use_val_edges_as_input:
            return self.graph
        val = self.split_edges["val_pos"]
        graph = self.graph.clone()
        graph.edge_index = torch.cat([graph.edge_index, val, val.flip(0)], dim=1)
        if graph.edge_attr is not None:
            graph.edge_attr = torch.cat([graph.edge_attr, self.val_pos_attr, self.val_pos_attr])
        return graph

    def _link_loader(self, split: str, batch_size: int | None, shuffle: bool) -> DataLoader:
        if self.graph is None:
            self.setup()
        if split == "train":
            pairs = self.split_edges["train_pos"]
            labels = torch.ones(pairs.size(1))
        else:
            pos, neg = self.split_edges[f"{split}_pos"], self.split_edges[f"{split}_neg"]
            pairs = torch.cat([pos, neg], dim=1)
            labels = torch.cat([torch.ones(pos.size(1)), torch.zeros(neg.size(1))])
        collate: Callable[[list[int]], Data] = _LinkBatches(self._message_passing_graph(split), pairs, labels)
        return DataLoader(
            range(pairs.size(1)), batch_size=batch_size or pairs.size(1), shuffle=shuffle, collate_fn=collate,
            num_workers=self.num_workers, persistent_workers=self.num_workers > 0,
        )

    def train_dataloader(self) -> DataLoader:
        return self._link_loader("train", self.batch_size, shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return self._link_loader("val", self.eval_batch_size, shuffle=False)

    def test_dataloader(self) -> DataLoader:
        return self._link_loader("test", self.eval_batch_size, shuffle=False)
