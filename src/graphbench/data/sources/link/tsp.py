"""TSP edge classification of Benchmarking GNNs (Dwivedi et al., 2020; after Joshi et al., 2019)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import Data

from graphbench.data.info import DataFacts, FeatureSpec
from graphbench.data.io.raw_files import RawFile
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.io.safe_load import load_torch_file
from graphbench.data.sources.base import Source
from graphbench.data.store.graph_store import GraphStore
from graphbench.vocabulary.errors import DataError
from graphbench.vocabulary.splits import SPLITS

#: no direct URL: PyG ships it inside https://data.pyg.org/datasets/benchmarking-gnns/TSP_v2.zip
TSP_FILES = [RawFile("TSP/raw/TSP_v2.pt")]


def read_tsp_split(graphs: Any, split: str, path: Path, offset: int = 0) -> list[Data]:
    """One split of ``TSP_v2.pt``: a list of dicts of tensors, each turned into a graph whose edges are
    also the labelled pairs (``edge_label_index`` = ``edge_index``, ``edge_label`` = ``y``)."""
    if not isinstance(graphs, (list, tuple)):
        raise DataError(f"{path}: split '{split}' must be a list of graphs, got {type(graphs).__name__}")
    out = []
    for i, g in enumerate(graphs):
        if not isinstance(g, dict) or not {"edge_index", "y"} <= set(g) or not ({"x", "pos"} & set(g)):
            keys = sorted(g) if isinstance(g, dict) else type(g).__name__
            raise DataError(f"{path}: graph {i} of split '{split}' needs edge_index, y and pos (or x); found {keys}")
        x = torch.as_tensor(g["x"] if "x" in g else g["pos"]).float()
        edge_index = torch.as_tensor(g["edge_index"]).long()
        y = torch.as_tensor(g["y"]).float().view(-1)
        if y.numel() != edge_index.size(1):
            raise DataError(f"{path}: graph {i} of split '{split}' has {edge_index.size(1)} edges but {y.numel()} edge labels")
        edge_attr = torch.as_tensor(g["edge_attr"]).float().view(edge_index.size(1), -1) if "edge_attr" in g else None
        out.append(
            Data(
                x=x.view(x.size(0), -1),
                edge_index=edge_index,
                edge_attr=edge_attr,
                edge_label_index=edge_index.clone(),
                edge_label=y,
                edge_label_id=torch.arange(offset, offset + y.numel()),
            )
        )
        offset += y.numel()
    return out


class TSP(Source):
    r"""TSP: 2D Euclidean instances of 50-500 cities, each city joined to its 25 nearest neighbours; an
    edge is positive when it lies on the optimal (Concorde) tour. 10,000 / 1,000 / 1,000 graphs, scored
    by the F1 score of the positive class. Raw layout of ``torch_geometric.datasets.GNNBenchmarkDataset``
    (``TSP/raw/TSP_v2.pt``: train, val and test lists of dicts with ``pos`` (or ``x``) city coordinates,
    ``edge_index``, ``edge_attr`` (distances) and ``y`` (edge labels)). The loss weights the two classes
    inversely to their frequency in the batch, as in Benchmarking GNNs. The feature widths are read
    from the data (:meth:`facts` needs the set-up store)."""

    level = "link"

    def facts(self, store: GraphStore | None = None) -> DataFacts | None:
        if store is None:
            return None
        data = store.collated
        edges = FeatureSpec("dense", dim=int(data.edge_attr.size(1))) if data.edge_attr is not None else None
        return DataFacts(num_outputs=1, node_features=FeatureSpec("dense", dim=int(data.x.size(1))), edge_features=edges)

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, Tensor]]:
        (path,) = raw.locate(TSP_FILES, "TSP")
        content = load_torch_file(path, "a TSP_v2.pt file of tensors")
        if not isinstance(content, (list, tuple)) or len(content) != 3:
            raise DataError(f"{path}: expected three lists (train, val, test), got {type(content).__name__}")
        graphs: list[Data] = []
        splits, offset = {}, 0
        for split, part in zip(SPLITS, content):
            start = len(graphs)
            graphs += read_tsp_split(part, split, path, offset)
            offset += sum(g.edge_label.numel() for g in graphs[start:])
            splits[split] = torch.arange(start, len(graphs))
        return GraphStore.from_list(graphs), splits
