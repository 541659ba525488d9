"""An in-memory PyG dataset built from already-collated tensors (no root folder, no download hooks)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import Batch, Data, InMemoryDataset

from graphbench.data.store.batching import Column, batching_plan, gather_batch


class GraphStore(InMemoryDataset):
    """Holds a collated dataset ``(collated, slices)``; every graph it yields carries ``idx``, its
    position in the full dataset, so that predictions can be aligned with the official split indices.

    ``collated`` is the ``Data`` whose attributes are those of all graphs concatenated (PyG keeps it
    as the private ``InMemoryDataset._data``, whose public getter warns); ``slices[key]`` holds the
    row offsets of every graph. A split view (:meth:`index_select`) shares both.

    The graphs are separated from the collated tensors all at once, on first access, and shared by
    the split views (:meth:`index_select`) — not one :func:`~torch_geometric.data.separate.separate`
    call per graph and per view, which makes the first epoch's data loading several times slower.
    """

    def __init__(self, data: Data, slices: dict[str, Tensor], transform: Callable[[Data], Data] | None = None):
        super().__init__(root=None, transform=transform, log=False)
        self.data = data  # PyG's public setter of the collated storage
        self.collated = data
        self.slices = slices
        self._separated: list[list[Data] | None] = []  # one shared cell: copies of this store share it
        self._plan: list[list[Column] | None] = []  # likewise
        self._ids: tuple[Any, Tensor] | None = None  # (self.indices() of a view, the same as a tensor)

    @classmethod
    def from_list(cls, graphs: Sequence[Data], transform: Callable[[Data], Data] | None = None) -> GraphStore:
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
        plan = self.plan()
        if plan is None or self.transform is not None:
            return Batch.from_data_list([self[p] for p in positions])
        return gather_batch(self.collated, self.slices, plan, self.graph_ids(positions))

    def plan(self) -> list[Column] | None:
        """How the bulk gather batches this store's attributes (built once, shared by the views);
        ``None`` when only PyG's per-graph collate batches it correctly."""
        if not self._plan:
            self._plan.append(batching_plan(self.collated, self.slices))
        return self._plan[0]

    def with_node_attributes(self, attributes: dict[str, Tensor]) -> GraphStore:
        """The same graphs (and transform) carrying also the node-level ``attributes``, each with one
        row per node of the whole dataset (select a split view afterwards); ``self`` is unchanged."""
        data = copy.copy(self.collated)
        slices = dict(self.slices)
        for key, value in attributes.items():
            if value.size(0) != int(self.slices["x"][-1]):
                raise ValueError(f"node attribute '{key}' has {value.size(0)} rows for {int(self.slices['x'][-1])} nodes")
            data[key], slices[key] = value, self.slices["x"]
        return GraphStore(data, slices, self.transform)

    def graph_ids(self, positions: Sequence[int]) -> Tensor:
        """Positions in this view -> indices in the whole dataset."""
        chosen = torch.as_tensor(positions, dtype=torch.long)
        indices = self.indices()
        if isinstance(indices, range):  # the whole dataset, or a slice of it
            return indices.start + indices.step * chosen
        if self._ids is None or self._ids[0] is not indices:  # a list or tensor of indices, kept as the view's own
            self._ids = (indices, torch.as_tensor(list(indices), dtype=torch.long))
        return self._ids[1][chosen]

    def _graphs(self) -> list[Data] | None:
        """Every graph, separated in bulk (built once); ``None`` when PyG's per-graph path must be used."""
        if not self._separated:
            self._separated.append(separate_all(self.collated, self.slices) if self.len() > 1 else None)
        return self._separated[0]

    def state(self) -> dict[str, Any]:
        """What goes into a cache file: plain tensors, reloadable with :meth:`from_state`."""
        return {"data": self.collated.to_dict(), "slices": self.slices}

    @classmethod
    def from_state(cls, state: dict[str, Any], transform: Callable[[Data], Data] | None = None) -> GraphStore:
        return cls(Data.from_dict(state["data"]), state["slices"], transform)


def separate_all(data: Data, slices: dict[str, Tensor]) -> list[Data] | None:
    """What ``separate(Data, data, i, slices, decrement=False)`` returns for every ``i``, with one
    ``torch.split`` per attribute. ``None`` for what only PyG's ``separate`` handles: attributes that
    are not plain tensors, stacked attributes (no concatenation dimension), explicit node counts."""
    if type(data) is not Data or "num_nodes" in data:
        return None
    store = data.stores[0]
    parts: dict[str, tuple[Tensor, ...]] = {}
    for key in slices:
        value = data.get(key)
        if value is None:
            continue
        dim = data.__cat_dim__(key, value, store) if type(value) is Tensor else None
        if dim is None or value.is_sparse:
            return None
        parts[key] = torch.split(value, slices[key].diff().tolist(), dim=dim)
    count = len(next(iter(slices.values()))) - 1
    return [Data(**{key: part[i] for key, part in parts.items()}) for i in range(count)]
