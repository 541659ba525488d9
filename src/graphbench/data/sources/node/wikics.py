"""WikiCS (Mernyei & Cangea, 2020): Wikipedia computer-science articles, 10 topics, 20 fixed splits."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from torch_geometric.data import Data

from graphbench.data.datamodules.node_level import NodeDataModule
from graphbench.data.io.raw_files import RawFile, ensure_raw_files
from graphbench.errors import DataError

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
    if undirected:
        src, dst = torch.cat([src, dst]), torch.cat([dst, src])
    keys = torch.unique(src * n + dst)
    masks = {}
    for key, name in (("train_masks", "train_mask"), ("val_masks", "val_mask")):
        mask = torch.tensor(raw[key], dtype=torch.bool)
        if mask.shape != (NUM_WIKICS_SPLITS, n):
            raise DataError(f"{path}: '{key}' must hold {NUM_WIKICS_SPLITS} masks of {n} entries, got {tuple(mask.shape)}")
        masks[name] = mask.t().contiguous()
    test = torch.tensor(raw["test_mask"], dtype=torch.bool)
    masks["test_mask"] = test.view(n, 1).expand(n, NUM_WIKICS_SPLITS).contiguous()
    return Data(x=x, edge_index=torch.stack([keys // n, keys % n]), y=y, **masks)


class WikiCSDataModule(NodeDataModule):
    r"""WikiCS: 11,701 articles, 10 classes, 20 official train/val splits sharing one test set
    (``split_index`` 0..19). ``split: random`` draws a random ``split_fractions`` split instead."""

    fixed_split = "official"
    num_fixed_splits = NUM_WIKICS_SPLITS
    version = "1"

    def __init__(self, *, download: bool = False, undirected: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.download = download
        self.undirected = undirected

    def cache_params(self) -> tuple[Any, ...]:
        return (self.name, self.undirected)

    def read_graph(self) -> Data:
        (path,) = ensure_raw_files(self.data_dir, WIKICS_FILES, "WikiCS", self.download)
        return read_wikics(path, self.undirected)
