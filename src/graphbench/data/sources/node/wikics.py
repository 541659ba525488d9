"""WikiCS (Mernyei & Cangea, 2020): Wikipedia computer-science articles, 10 topics, 20 fixed splits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from torch_geometric.data import Data
from torch_geometric.utils import coalesce, to_undirected

from graphbench.data.io.raw_files import RawFile
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.base import OneGraphNodeSource
from graphbench.vocabulary.errors import DataError

NUM_WIKICS_SPLITS = 20
WIKICS_FILES = [RawFile("WikiCS/raw/data.json", url="https://github.com/pmernyei/wiki-cs-dataset/raw/master/dataset/data.json")]
_KEYS = ("features", "labels", "links", "train_masks", "val_masks", "test_mask")


def read_wikics(path: Path, undirected: bool = True) -> Data:
    r"""``data.json`` as read by ``torch_geometric.datasets.WikiCS``: ``features`` (300-d GloVe means),
    ``labels``, ``links`` (adjacency lists), 20 ``train_masks`` and ``val_masks``, one ``test_mask``
    (shared by every split). Train/val masks come back as ``[N, 20]``. With ``undirected`` (PyG's
    default) every link is added in both directions, duplicates merged."""
    try:
        raw = json.loads(Path(path).read_text())
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not valid JSON ({exc})") from exc
    missing = [k for k in _KEYS if k not in raw]
    if missing:
        raise DataError(f"{path}: missing keys {missing} of the WikiCS format")
    x = torch.tensor(raw["features"], dtype=torch.float)
    y = torch.tensor(raw["labels"], dtype=torch.long)
    n = x.size(0)
    if y.numel() != n or len(raw["links"]) != n:
        raise DataError(f"{path}: features, labels and links must all have one entry per node ({n})")
    src = torch.tensor([i for i, js in enumerate(raw["links"]) for _ in js], dtype=torch.long)
    dst = torch.tensor([int(j) for js in raw["links"] for j in js], dtype=torch.long)
    edge_index = torch.stack([src, dst])
    edge_index = to_undirected(edge_index, num_nodes=n) if undirected else coalesce(edge_index, num_nodes=n)
    masks = {}
    for key, name in (("train_masks", "train_mask"), ("val_masks", "val_mask")):
        mask = torch.tensor(raw[key], dtype=torch.bool)
        if mask.shape != (NUM_WIKICS_SPLITS, n):
            raise DataError(f"{path}: '{key}' must hold {NUM_WIKICS_SPLITS} masks of {n} entries, got {tuple(mask.shape)}")
        masks[name] = mask.t().contiguous()
    test = torch.tensor(raw["test_mask"], dtype=torch.bool)
    masks["test_mask"] = test.view(n, 1).expand(n, NUM_WIKICS_SPLITS).contiguous()
    return Data(x=x, edge_index=edge_index, y=y, **masks)


class WikiCS(OneGraphNodeSource):
    r"""WikiCS: 11,701 articles, 10 classes, 20 official train/val splits sharing one test set
    (the fixed split ``official``, ``split_index`` 0..19)."""

    fixed_split = "official"
    num_fixed_splits = NUM_WIKICS_SPLITS

    def __init__(self, *, undirected: bool = True) -> None:
        self.undirected = undirected

    def cache_params(self) -> tuple[Any, ...]:
        return (self.undirected,)

    def read_graph(self, raw: RawRoot) -> Data:
        (path,) = raw.locate(WIKICS_FILES, "WikiCS")
        return read_wikics(path, self.undirected)
