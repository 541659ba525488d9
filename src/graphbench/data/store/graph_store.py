"""An in-memory PyG dataset built from already-collated tensors (no root folder, no download hooks)."""
from __future__ import annotations

import copy
from typing import Any, Callable, Sequence

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Batch, Data, InMemoryDataset

from graphbench.data.store.batching import Column, batching_plan, gather_batch


class GraphStore(InMemoryDataset):
    """Holds a collated dataset ``(data, slices)``; every graph it yields carries ``idx``, its position
    in the full dataset, so that predictions can be aligned with the official split indices.

    The graphs are separated from the collated tensors all at once, on first access, and shared by
    the split views (:meth:`index_select`) — not one :func:`~torch_geometric.data.separate.separate`
    call per graph and per view, which made the first epoch's data loading several times slower.
    """

    def __init__(self, data: Data, slices: dict[str, Tensor], transform: Callable[[Data], Data] | None = None):
        super().__init__(root=None, transform=transform, log=False)
        self._data = data
        self.slices = slices
        self._separated: list[list[Data] | None] = []  # one shared cell: copies of this store share it
        self._plan: list[list[Column] | None] = []  # likewise
        self._ids: tuple[Any, Tensor] | None = None  # (self._indices, the same as a tensor)

    @classmethod
    def from_list(cls, graphs: Sequence[Data], transform: Callable[[Data], Data] | None = None) -> "GraphStore":
        data, slices = InMemoryDataset.collate(list(graphs))
        return cls(data, slices, transform)

    def get(self, idx: int) -> Data:
        graphs = self._graphs()
        data = copy.copy(graphs[idx]) if graphs is not None else super().get(idx)
        data.idx = int(idx)
        return data

    def batch(self, positions: Sequence[int]) -> Batch:
        """The graphs at ``positions`` of this view, collated: exactly
        ``Batch.from_data_list([self[p] for p in positions])``, gathered in bulk by
        :func:`~graphbench.data.store.batching.gather_batch` unless a transform or an attribute
        that only PyG's collate handles needs the per-graph path."""
        if not self._plan:
            self._plan.append(batching_plan(self._data, self.slices))
        if self._plan[0] is None or self.transform is not None:
            return Batch.from_data_list([self[p] for p in positions])
        return gather_batch(self._data, self.slices, self._plan[0], self._graph_ids(positions))

    def _graph_ids(self, positions: Sequence[int]) -> Tensor:
        """Positions in this view -> indices in the whole dataset."""
        chosen = torch.as_tensor(positions, dtype=torch.long)
        if self._indices is None:
            return chosen
        if self._ids is None or self._ids[0] is not self._indices:
            self._ids = (self._indices, torch.as_tensor(list(self.indices()), dtype=torch.long))
        return self._ids[1][chosen]

    def _graphs(self) -> list[Data] | None:
        """Every graph, separated in bulk (built once); ``None`` when PyG's per-graph path must be used."""
        if not self._separated:
            self._separated.append(separate_all(self._data, self.slices) if self.len() > 1 else None)
        return self._separated[0]

    def state(self) -> dict[str, Any]:
        """What goes into a cache file: plain tensors, reloadable with :meth:`from_state`."""
        return {"data": self._data.to_dict(), "slices": self.slices}

    @classmethod
    def from_state(cls, state: dict[str, Any], transform: Callable[[Data], Data] | None = None) -> "GraphStore":
        return cls(Data.from_dict(state["data"]), state["slices"], transform)


def separate_all(data: Data, slices: dict[str, Tensor]) -> list[Data] | None:
    """What ``separate(Data, data, i, slices, decrement=False)`` returns for every ``i``, with one
    ``torch.split`` per attribute. ``None`` for what only PyG's ``separate`` handles: attributes that
    are not plain tensors, stacked attributes (no concatenation dimension), explicit node counts."""
    if type(data) is not Data or hasattr(data._store, "_num_nodes"):
        return None
    parts: dict[str, tuple[Tensor, ...]] = {}
    for key in slices:
        value = data._store.get(key)
        if value is None:
            continue
        dim = data.__cat_dim__(key, value, data._store) if type(value) is Tensor else None
        if dim is None or value.is_sparse:
            return None
        parts[key] = torch.split(value, slices[key].diff().tolist(), dim=dim)
    count = len(next(iter(slices.values()))) - 1
    return [Data(**{key: part[i] for key, part in parts.items()}) for i in range(count)]


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
