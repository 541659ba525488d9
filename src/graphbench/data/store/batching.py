"""Mini-batches gathered from a ``GraphStore`` in bulk.

PyG's ``DataLoader`` builds every mini-batch from one ``Data`` object per graph: the dataset
returns ``B`` objects and ``Batch.from_data_list`` concatenates them attribute by attribute. A
``GraphStore`` already holds every attribute of every graph concatenated, so a mini-batch is
one ``index_select`` per attribute: :func:`gather_batch` builds, from the row ranges of the chosen
graphs, exactly the ``Batch`` that ``Batch.from_data_list`` returns (same attributes, ``batch`` and
``ptr`` vectors, ``_slice_dict`` and ``_inc_dict``, so ``batch.get_example(i)`` works).

The gather runs on whatever device the store's tensors and the ids are on (the loaders of
:mod:`graphbench.data.store.loader` can hand out ids only, for the batch to be gathered where the
model trains: :mod:`graphbench.data.store.device_store`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor
from torch_geometric.data import Batch, Data
from torch_geometric.utils import cumsum


@dataclass(frozen=True)
class Column:
    """How one attribute is batched: concatenated along ``dim``; node ids (``edge_index`` and any
    key PyG's ``Data.__inc__`` increments by ``num_nodes``) are shifted by the node offset."""

    key: str
    dim: int
    shift_by_nodes: bool


def batching_plan(data: Data, slices: dict[str, Tensor]) -> list[Column] | None:
    """The columns of a collated dataset, or ``None`` when only ``Batch.from_data_list`` batches it
    correctly: a ``Data`` subclass (it may override ``__inc__``/``__cat_dim__``), explicit node
    counts, no ``x`` to count nodes by, non-tensor, sparse or stacked attributes, or a key PyG
    increments by something other than the node count (names containing ``batch``)."""
    if type(data) is not Data or "num_nodes" in data or "x" not in slices:
        return None
    store = data.stores[0]
    columns = []
    for key in slices:
        value = data.get(key)
        if value is None:
            continue
        if type(value) is not Tensor or value.is_sparse or value.dim() == 0 or "batch" in key:
            return None
        dim = data.__cat_dim__(key, value, store)
        if dim is None:
            return None
        columns.append(Column(key, int(dim), "index" in key or key == "face"))
    return columns if any(c.key == "x" and c.dim == 0 for c in columns) else None


def concatenated_ranges(starts: Tensor, counts: Tensor) -> Tensor:
    """``cat([arange(s, s + c) for s, c in zip(starts, counts)])`` without a Python loop."""
    offsets = cumsum(counts)
    total = int(offsets[-1])
    shifts = torch.repeat_interleave(starts - offsets[:-1], counts, output_size=total)
    return torch.arange(total, dtype=torch.long, device=starts.device) + shifts


def gather_batch(data: Data, slices: dict[str, Tensor], columns: Sequence[Column], ids: Tensor) -> Batch:
    """``Batch.from_data_list([graph_i for i in ids])`` where graph ``i`` is rows
    ``slices[key][i]:slices[key][i + 1]`` of every attribute, plus ``idx = i``. Every tensor of the
    batch is on the device of ``data``, ``slices`` and ``ids`` (which must agree)."""
    num_graphs, device = ids.numel(), ids.device
    node_counts = slices["x"][ids + 1] - slices["x"][ids]
    node_offsets = cumsum(node_counts)
    zeros = torch.zeros(num_graphs, dtype=torch.long, device=device)
    out = Batch(_base_cls=Data)
    slice_dict: dict[str, Tensor] = {}
    inc_dict: dict[str, Tensor] = {}
    for column in columns:
        starts, counts = slices[column.key][ids], slices[column.key][ids + 1] - slices[column.key][ids]
        value = data[column.key].index_select(column.dim, concatenated_ranges(starts, counts))
        inc_dict[column.key] = node_offsets[:-1] if column.shift_by_nodes else zeros
        if column.shift_by_nodes and num_graphs > 1 and int(node_offsets[-2]) != 0:
            shape = [1] * value.dim()
            shape[column.dim] = -1
            value = value + torch.repeat_interleave(node_offsets[:-1], counts).view(shape)
        out[column.key] = value
        slice_dict[column.key] = cumsum(counts)
    out.idx = ids.clone()
    slice_dict["idx"], inc_dict["idx"] = torch.arange(num_graphs + 1, device=device), zeros
    out.batch = torch.repeat_interleave(torch.arange(num_graphs, device=device), node_counts, output_size=int(node_offsets[-1]))
    # the bookkeeping ``Batch.from_data_list`` writes (PyG has no public constructor for it), so that
    # ``get_example``/``index_select`` on the batch work as on PyG's own batches
    out.ptr = node_offsets
    out._num_graphs = num_graphs
    out._slice_dict = slice_dict
    out._inc_dict = inc_dict
    return out
