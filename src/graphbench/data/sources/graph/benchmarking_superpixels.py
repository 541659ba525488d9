"""MNIST and CIFAR10 superpixel graphs (Knyazev et al., 2019) as benchmarked by Dwivedi et al. (2020).

Raw layout (that of ``torch_geometric.datasets.GNNBenchmarkDataset(root=<data_dir>, name)``)::

    <NAME>/raw/<NAME>_v2.pt   torch.save'd [train, val, test], each a list of dicts of tensors:
                              'x' [N, C] mean intensity/colour, 'pos' [N, 2] centroid, 'edge_index' [2, E],
                              'edge_attr' [E] or [E, 1] (k-NN edge weight), 'y' [1] class
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from graphbench.data.info import DataFacts, FeatureSpec
from graphbench.data.io.archives import Archive
from graphbench.data.io.raw_files import RawFile
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.io.safe_load import load_torch_file
from graphbench.data.sources.base import Source
from graphbench.data.store.collate import collate
from graphbench.data.store.graph_store import GraphStore
from graphbench.vocabulary.errors import ArgumentError, DataError
from graphbench.vocabulary.splits import SPLITS

ROOT_URL = "https://data.pyg.org/datasets/benchmarking-gnns"
#: name -> channels of 'x' (grey / RGB); node features are [x, pos]
SUPERPIXEL_DATASETS: dict[str, int] = {"MNIST": 1, "CIFAR10": 3}
KEYS = ("x", "pos", "edge_index", "edge_attr", "y")
NUM_CLASSES = 10


class BenchmarkingSuperpixels(Source):
    r"""MNIST / CIFAR10 superpixels: classify an image (10 classes, accuracy) from its graph of SLIC
    superpixels (≤ 75 / ≤ 150 nodes, 8-NN edges), with the official 55,000 / 5,000 / 10,000
    (MNIST) and 45,000 / 5,000 / 10,000 (CIFAR10) split. Node features: intensity (MNIST) or RGB
    (CIFAR10) concatenated with the 2-D centroid, as Benchmarking GNNs feeds them; edge feature:
    the k-NN edge weight (dense)."""

    def __init__(self, *, superpixel_name: str) -> None:
        if superpixel_name not in SUPERPIXEL_DATASETS:
            raise ArgumentError(f"superpixel_name={superpixel_name!r} is not supported; valid: {sorted(SUPERPIXEL_DATASETS)}")
        self.superpixel_name = superpixel_name

    def facts(self, store: GraphStore | None = None) -> DataFacts:
        dim = SUPERPIXEL_DATASETS[self.superpixel_name] + 2
        return DataFacts(
            num_outputs=NUM_CLASSES, node_features=FeatureSpec("dense", dim=dim), edge_features=FeatureSpec("dense", dim=1)
        )

    def cache_params(self) -> tuple[Any, ...]:
        return (self.superpixel_name,)

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, Tensor]]:
        name = self.superpixel_name
        archive = Archive(f"{ROOT_URL}/{name}_v2.zip", "", f"{name}/raw")
        (path,) = raw.locate([RawFile(f"{name}/raw/{name}_v2.pt")], name, [archive])
        content = load_torch_file(path, "a readable list of tensor dicts")
        if not isinstance(content, (list, tuple)) or len(content) != 3:
            raise DataError(f"{path}: expected [train, val, test] lists of graphs, got {type(content).__name__}")
        channels = SUPERPIXEL_DATASETS[self.superpixel_name]
        xs, edge_indices, edge_attrs, ys, splits = [], [], [], [], {}
        for split, graphs in zip(SPLITS, content):
            start = len(ys)
            for i, g in enumerate(graphs):
                if not isinstance(g, dict) or any(k not in g for k in KEYS):
                    raise DataError(f"{path}: {split} graph {i} is not a dict with keys {list(KEYS)}")
                x = g["x"].float().view(g["pos"].size(0), -1)
                if x.size(1) != channels:
                    raise DataError(
                        f"{path}: {split} graph {i} has {x.size(1)} feature channels, {self.superpixel_name} has {channels}"
                    )
                xs.append(torch.cat([x, g["pos"].float()], dim=1))
                edge_indices.append(g["edge_index"].long())
                edge_attrs.append(g["edge_attr"].float().view(-1, 1))
                ys.append(int(g["y"].view(-1)[0]))
            splits[split] = torch.arange(start, len(ys))
        y = torch.tensor(ys, dtype=torch.long)
        if y.numel() and (y.min() < 0 or y.max() >= NUM_CLASSES):
            raise DataError(f"{path}: class labels outside 0..{NUM_CLASSES - 1}")
        data, slices = collate(edge_indices, {"x": xs}, {"edge_attr": edge_attrs}, {"y": y})
        return GraphStore(data, slices), splits
