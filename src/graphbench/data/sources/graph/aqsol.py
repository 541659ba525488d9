"""AQSOL (Sorkun et al., 2019) as prepared by Benchmarking GNNs (Dwivedi et al., 2020).

Raw layout (that of ``torch_geometric.datasets.AQSOL(root=<data_dir>/AQSOL)``)::

    AQSOL/raw/{train,val,test}.pickle   lists of tuples (x, edge_attr, edge_index, y) of numpy arrays:
                                        x [N] atom type (65), edge_attr [E] bond type (5), edge_index [2, E], y float
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor

from graphbench.data.info import DataFacts, FeatureSpec
from graphbench.data.io.archives import Archive
from graphbench.data.io.raw_files import RawFile
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.io.safe_load import load_tensor_pickle
from graphbench.data.sources.base import Source
from graphbench.data.store.collate import collate
from graphbench.data.store.graph_store import GraphStore
from graphbench.vocabulary.errors import DataError
from graphbench.vocabulary.splits import SPLITS

AQSOL_ARCHIVE = Archive("https://www.dropbox.com/s/lzu9lmukwov12kt/aqsol_graph_raw.zip?dl=1", "asqol_graph_raw/", "AQSOL/raw")
AQSOL_FILES = [RawFile(f"AQSOL/raw/{split}.pickle") for split in SPLITS]
NUM_ATOM_TYPES = 65
NUM_BOND_TYPES = 5  # NONE, SINGLE, DOUBLE, AROMATIC, TRIPLE


def aqsol_graph(entry: Any, where: str) -> tuple[Tensor, Tensor, Tensor, float] | None:
    """``x`` [N, 1], ``edge_index``, ``edge_attr`` [E, 1], ``y`` of one raw graph; ``None`` for a
    graph without bonds, which PyG's AQSOL loader (and so the published numbers) leaves out."""
    if not isinstance(entry, (tuple, list)) or len(entry) != 4:
        raise DataError(f"{where}: expected a tuple (x, edge_attr, edge_index, y), got {type(entry).__name__}")
    x, edge_attr, edge_index, y = entry
    edge_index = torch.from_numpy(np.asarray(edge_index, dtype=np.int64)).view(2, -1)
    if edge_index.numel() == 0:
        return None
    x = torch.from_numpy(np.asarray(x, dtype=np.int64)).view(-1, 1)
    edge_attr = torch.from_numpy(np.asarray(edge_attr, dtype=np.int64)).view(-1, 1)
    if edge_attr.size(0) != edge_index.size(1) or int(edge_index.max()) >= x.size(0):
        raise DataError(f"{where}: {edge_attr.size(0)} bond types for {edge_index.size(1)} edges over {x.size(0)} atoms")
    return x, edge_index, edge_attr, float(y)


class AQSOL(Source):
    r"""AQSOL: regress aqueous solubility of ~9.8k molecules from atom and bond types, scored by MAE,
    with the official train/val/test pickles. Nodes: 65 atom types, edges: bond types (categorical).
    Graphs without any bond are skipped, as in PyG's loader."""

    def facts(self, store: GraphStore | None = None) -> DataFacts:
        return DataFacts(
            num_outputs=1,
            node_features=FeatureSpec("categorical", cardinalities=(NUM_ATOM_TYPES,)),
            edge_features=FeatureSpec("categorical", cardinalities=(NUM_BOND_TYPES,)),
        )

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, Tensor]]:
        xs: list[Tensor] = []
        edge_indices: list[Tensor] = []
        edge_attrs: list[Tensor] = []
        ys: list[float] = []
        splits = {}
        for split, path in zip(SPLITS, raw.locate(AQSOL_FILES, "AQSOL", [AQSOL_ARCHIVE])):
            graphs = load_tensor_pickle(path)
            if not isinstance(graphs, (list, tuple)):
                raise DataError(f"{path}: expected a list of graphs, got {type(graphs).__name__}")
            start = len(ys)
            for i, entry in enumerate(graphs):
                graph = aqsol_graph(entry, f"{path}[{i}]")
                if graph is None:
                    continue
                xs.append(graph[0])
                edge_indices.append(graph[1])
                edge_attrs.append(graph[2])
                ys.append(graph[3])
            splits[split] = torch.arange(start, len(ys))
        y = torch.tensor(ys, dtype=torch.float).view(-1, 1)
        data, slices = collate(edge_indices, {"x": xs}, {"edge_attr": edge_attrs}, {"y": y})
        if int(data.x.max()) >= NUM_ATOM_TYPES or int(data.edge_attr.max()) >= NUM_BOND_TYPES:
            raise DataError(f"AQSOL atom/bond types exceed the official {NUM_ATOM_TYPES}/{NUM_BOND_TYPES} types")
        return GraphStore(data, slices), splits
