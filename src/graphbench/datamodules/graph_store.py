"""An in-memory PyG dataset built from already-collated tensors (no root folder, no download hooks)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data, InMemoryDataset


class GraphStore(InMemoryDataset):
    """Holds a collated dataset ``(data, slices)``; every graph it yields carries ``idx``, its position
    in the full dataset, so that predictions can be aligned with the official split indices."""

    def __init__(self, data: Data, slices: dict[str, Tensor], transform: Callable[[Data], Data] | None = None):
        super().__init__(root=None, transform=transform, log=False)
        self._data = data
        self.slices = slices

    @classmethod
    def from_list(cls, graphs: Sequence[Data], transform: Callable[[Data], Data] | None = None) -> "GraphStore":
        data, slices = InMemoryDataset.collate(list(graphs))
        return cls(data, slices, transform)

    def get(self, idx: int) -> Data:
        data = super().get(idx)
        data.idx = int(idx)
        return data

    def state(self) -> dict[str, Any]:
        """What goes into a cache file: plain tensors, reloadable with :meth:`from_state`."""
        return {"data": self._data.to_dict(), "slices": self.slices}

    @classmethod
    def from_state(cls, state: dict[str, Any], transform: Callable[[Data], Data] | None = None) -> "GraphStore":
        return cls(Data.from_dict(state["data"]), state["slices"], transform)


def collate_arrays(
    node_feat: Sequence[np.ndarray],
    edge_index: Sequence[np.ndarray],
    edge_feat: Sequence[np.ndarray] | None,
    y: Tensor,
) -> tuple[Data, dict[str, Tensor]]:
    """Collate per-graph numpy arrays into one ``(data, slices)`` pair in bulk, without building one
    ``Data`` object per graph. ``edge_index`` arrays are [2, E_i] with graph-local node ids (PyG's
    in-memory convention: ids are offset only when a mini-batch is formed)."""
    return collate_flat(
        x=torch.from_numpy(np.concatenate(node_feat)),
        edge_index=torch.from_numpy(np.concatenate(edge_index, axis=1)),
        edge_attr=torch.from_numpy(np.concatenate(edge_feat)) if edge_feat is not None else None,
        num_nodes=torch.tensor([len(a) for a in node_feat], dtype=torch.long),
        num_edges=torch.tensor([a.shape[1] for a in edge_index], dtype=torch.long),
        y=y,
    )


def collate_flat(
    *,
    x: Tensor,
    edge_index: Tensor,
    edge_attr: Tensor | None,
    num_nodes: Tensor,
    num_edges: Tensor,
    y: Tensor,
) -> tuple[Data, dict[str, Tensor]]:
    """``(data, slices)`` from the concatenated arrays of all graphs and each graph's node and edge
    counts; ``x``, ``edge_index`` and ``edge_attr`` are stored as int64, node ids graph-local."""
    node_ptr = torch.cat([torch.zeros(1, dtype=torch.long), num_nodes.long().cumsum(0)])
    edge_ptr = torch.cat([torch.zeros(1, dtype=torch.long), num_edges.long().cumsum(0)])
    data = Data(x=x.long(), edge_index=edge_index.long(), y=y)
    slices = {"x": node_ptr, "edge_index": edge_ptr, "y": torch.arange(len(num_nodes) + 1)}
    if edge_attr is not None:
        data.edge_attr = edge_attr.long()
        slices["edge_attr"] = edge_ptr
    return data, slices
