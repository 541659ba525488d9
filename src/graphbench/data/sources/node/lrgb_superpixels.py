"""LRGB PascalVOC-SP and COCO-SP (Dwivedi et al., 2022): node classification of image superpixels.

Raw layout (that of ``torch_geometric.datasets.LRGBDataset(root=<data_dir>, name)``; SLIC compactness
30, region-boundary edges, the LRGB default)::

    <name>/raw/{train,val,test}.pickle   lists of tuples (x [N, 14], edge_attr [E, 2], edge_index [2, E], y [N])

Every node of a graph is labelled, so this is a node-level task over many graphs: graphs are batched
as usual (:class:`~graphbench.data.datamodules.node_level.NodeLevelDataModule` adds ``n_id``, each
node's position in the whole dataset), and each node carries the three ``{split}_mask`` (True on
every node of that split's graphs), which the task module uses to select outputs.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from graphbench.data.info import DataFacts, FeatureSpec
from graphbench.data.io.archives import Archive
from graphbench.data.io.raw_files import RawFile
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.io.safe_load import load_tensor_pickle
from graphbench.data.sources.base import Source
from graphbench.data.store.collate import collate, node_split_masks
from graphbench.data.store.graph_store import GraphStore
from graphbench.vocabulary.errors import ArgumentError, DataError
from graphbench.vocabulary.splits import SPLITS

#: COCO category ids (0 = background) that occur; LRGB maps them to 0..80 in this order
COCO_CATEGORY_IDS = tuple(i for i in range(91) if i not in {12, 26, 29, 30, 45, 66, 68, 69, 71, 83})
#: name -> (archive URL, folder inside the archive, number of classes)
LRGB_SUPERPIXELS: dict[str, tuple[str, str, int]] = {
    "pascalvoc-sp": (
        "https://www.dropbox.com/s/8x722ai272wqwl4/pascalvocsp.zip?dl=1",
        "voc_superpixels_edge_wt_region_boundary/",
        21,
    ),
    "coco-sp": ("https://www.dropbox.com/s/r6ihg1f4pmyjjy0/cocosp.zip?dl=1", "coco_superpixels_edge_wt_region_boundary/", 81),
}
NODE_DIM, EDGE_DIM = 14, 2


def superpixel_graph(entry: Any, where: str) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    if not isinstance(entry, (tuple, list)) or len(entry) != 4:
        raise DataError(f"{where}: expected a tuple (x, edge_attr, edge_index, y), got {type(entry).__name__}")
    x, edge_attr, edge_index, y = (torch.as_tensor(v) for v in entry)
    x, edge_attr = x.float().view(x.size(0), -1), edge_attr.float().view(edge_attr.size(0), -1)
    if x.size(1) != NODE_DIM or edge_attr.size(1) != EDGE_DIM or y.numel() != x.size(0):
        raise DataError(
            f"{where}: expected x [N, {NODE_DIM}], edge_attr [E, {EDGE_DIM}], y [N]; got "
            f"{tuple(x.shape)}, {tuple(edge_attr.shape)}, {tuple(y.shape)}"
        )
    return x, edge_attr, edge_index.long().view(2, -1), y.long().view(-1)


class LRGBSuperpixels(Source):
    r"""PascalVOC-SP (21 classes, 8,498 / 1,428 / 1,429 graphs) or COCO-SP (81 classes, 113,286 /
    5,000 / 5,000 graphs): classify every superpixel node (≤ 500 per image) into the semantic class
    at its centroid, scored by macro F1 over classes. Node features: 14 dense (RGB statistics and
    position), edge features: 2 dense (boundary-based weights). Node-level, many graphs."""

    level = "node"

    def __init__(self, *, lrgb_name: str) -> None:
        if lrgb_name not in LRGB_SUPERPIXELS:
            raise ArgumentError(f"lrgb_name={lrgb_name!r} is not supported; valid: {sorted(LRGB_SUPERPIXELS)}")
        self.lrgb_name = lrgb_name

    def facts(self, store: GraphStore | None = None) -> DataFacts:
        return DataFacts(
            num_outputs=LRGB_SUPERPIXELS[self.lrgb_name][2],
            node_features=FeatureSpec("dense", dim=NODE_DIM),
            edge_features=FeatureSpec("dense", dim=EDGE_DIM),
        )

    def cache_params(self) -> tuple[Any, ...]:
        return (self.lrgb_name,)

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, Tensor]]:
        url, folder, num_classes = LRGB_SUPERPIXELS[self.lrgb_name]
        files = [RawFile(f"{self.lrgb_name}/raw/{s}.pickle") for s in SPLITS]
        paths = raw.locate(files, self.lrgb_name, [Archive(url, folder, f"{self.lrgb_name}/raw")])
        remap = None
        if self.lrgb_name == "coco-sp":
            remap = torch.full((max(COCO_CATEGORY_IDS) + 1,), -1, dtype=torch.long)
            remap[list(COCO_CATEGORY_IDS)] = torch.arange(len(COCO_CATEGORY_IDS))
        xs, edge_attrs, edge_indices, ys, splits = [], [], [], [], {}
        for split, path in zip(SPLITS, paths):
            graphs = load_tensor_pickle(path)
            if not isinstance(graphs, (list, tuple)):
                raise DataError(f"{path}: expected a list of graphs, got {type(graphs).__name__}")
            start = len(ys)
            for i, entry in enumerate(graphs):
                x, edge_attr, edge_index, y = superpixel_graph(entry, f"{path}[{i}]")
                if remap is not None:
                    known = (y >= 0) & (y < remap.numel())
                    y = torch.where(known, remap[y.clamp(0, remap.numel() - 1)], -1)
                if y.numel() and (y.min() < 0 or y.max() >= num_classes):
                    raise DataError(f"{path}[{i}]: node labels outside the {num_classes} classes of {self.lrgb_name}")
                xs.append(x)
                edge_attrs.append(edge_attr)
                edge_indices.append(edge_index)
                ys.append(y)
            splits[split] = torch.arange(start, len(ys))
        num_nodes = torch.tensor([x.size(0) for x in xs], dtype=torch.long)
        data, slices = collate(edge_indices, {"x": xs, "y": ys}, {"edge_attr": edge_attrs})
        for key, value in node_split_masks(num_nodes, splits).items():
            data[key], slices[key] = value, slices["x"]
        return GraphStore(data, slices), splits
