r"""Dataset-level precomputation of positional/structural encodings.

Per-graph transforms (PyG's :class:`~torch_geometric.transforms.AddLaplacianEigenvectorPE`
and :class:`~torch_geometric.transforms.AddRandomWalkPE`) pay Python and small-kernel
overhead once per graph. :func:`precompute` lets a transform encode the whole list at once:
:meth:`RWSE.transform_many <graphbench.transforms.rwse.RWSE.transform_many>` walks the
block-diagonal matrix of hundreds of graphs at once (:class:`CollatedGraphs`, whose chunks
:func:`parallel_map` spreads over one worker thread per intra-op thread that torch may use);
:meth:`LapPE.transform_many <graphbench.transforms.lap_pe.LapPE.transform_many>` spreads
its per-graph LAPACK calls over processes. :class:`PECompose` chains PE transforms
(``pe=lappe+rwse``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.transforms import BaseTransform, Compose

from graphbench.speedups.gc_pause import gc_paused

#: Default upper bound on ``sum(n * n)`` over the graphs of one chunk (:meth:`CollatedGraphs.spans`).
MAX_CHUNK_ELEMENTS: int = 1 << 20


@dataclass(frozen=True)
class CollatedGraphs:
    r"""Many graphs as concatenated tensors, laid out as by
    :meth:`torch_geometric.data.InMemoryDataset.collate` (and so as in graphbench's ``GraphStore``):
    graph ``b`` owns the nodes ``node_ptr[b] <= v < node_ptr[b + 1]`` of the concatenation and the
    columns ``edge_ptr[b]:edge_ptr[b + 1]`` of ``edge_index``, which number its nodes from 0 (not
    incremented); ``edge_weight``, when given, holds one weight per column.

    Transforms with a ``transform_collated(graphs)`` method (:class:`~graphbench.transforms.rwse.RWSE`,
    :class:`~graphbench.transforms.lap_pe.LapPE`) encode such a whole dataset at once and return node attributes with one row per node of the
    concatenation, with no per-graph object made or copied.
    """

    edge_index: Tensor
    node_ptr: Tensor
    edge_ptr: Tensor
    edge_weight: Tensor | None = None

    @classmethod
    def from_list(cls, data_list: Sequence[Data], counts: Sequence[int]) -> CollatedGraphs:
        r"""``data_list`` (on CPU, detached) with its graphs' node ``counts``; a graph without
        ``edge_weight`` weighs its edges 1 when others have weights."""
        empty = torch.zeros(2, 0, dtype=torch.long)
        edge_indices = [empty if g.edge_index is None else g.edge_index.detach().cpu() for g in data_list]
        sizes = [edge_index.size(1) for edge_index in edge_indices]
        weight = None
        if any(g.get("edge_weight") is not None for g in data_list):
            weight = torch.cat(
                [torch.zeros(0)]
                + [
                    torch.ones(size) if g.get("edge_weight") is None else g.edge_weight.detach().cpu().reshape(-1)
                    for g, size in zip(data_list, sizes)
                ]
            )
        return cls(
            edge_index=torch.cat([empty, *edge_indices], dim=1),
            node_ptr=_offsets(counts),
            edge_ptr=_offsets(sizes),
            edge_weight=weight,
        )

    @property
    def num_graphs(self) -> int:
        return self.node_ptr.numel() - 1

    def spans(self, max_elements: int = MAX_CHUNK_ELEMENTS) -> list[tuple[int, int]]:
        r"""Consecutive graph ranges ``[a, b)`` covering all graphs, each of at least one graph and at
        most ``max_elements`` entries ``sum(max(n, 1) ** 2)`` over its graphs otherwise."""
        spans: list[tuple[int, int]] = []
        elements = 0
        for b, n in enumerate(self.node_ptr.diff().tolist()):
            if not spans or elements + max(n, 1) ** 2 > max_elements:
                spans.append((b, b))
                elements = 0
            spans[-1] = (spans[-1][0], b + 1)
            elements += max(n, 1) ** 2
        return spans


def _offsets(sizes: Sequence[int]) -> Tensor:
    out = torch.zeros(len(sizes) + 1, dtype=torch.long)
    torch.cumsum(torch.as_tensor(list(sizes), dtype=torch.long), 0, out=out[1:])
    return out


def attach(data_list: Sequence[Data], attrs: Sequence[dict[str, Tensor]]) -> list[Data]:
    r"""Returns shallow copies of the graphs with ``attrs`` set (inputs are untouched)."""
    out = []
    for data, extra in zip(data_list, attrs):
        data = copy.copy(data)
        for name, value in extra.items():
            data[name] = value
        out.append(data)
    return out


class PECompose(BaseTransform):
    r"""Applies several PE transforms in sequence, per graph or batched.

    ``PECompose([LapPE(8), RWSE(20)])`` is the ``pe=lappe+rwse`` transform. Unlike
    :class:`torch_geometric.transforms.Compose` it exposes :meth:`transform_many`, which
    uses each sub-transform's batched path when it has one.

    Args:
        transforms (Sequence[BaseTransform]): The transforms, applied in order.
    """

    def __init__(self, transforms: Sequence[BaseTransform]) -> None:
        self.transforms = list(transforms)

    def forward(self, data: Data) -> Data:
        for transform in self.transforms:
            data = transform(data)
        return data

    def transform_many(self, data_list: Sequence[Data]) -> list[Data]:
        out = list(data_list)
        for transform in self.transforms:
            out = _apply_many(transform, out)
        return out

    def __repr__(self) -> str:
        inner = ", ".join(repr(t) for t in self.transforms)
        return f"{self.__class__.__name__}([{inner}])"


def precompute(data_list: Sequence[Data], transform: BaseTransform | None) -> list[Data]:
    r"""Applies ``transform`` to every graph of ``data_list``, batched where possible.

    Transforms with a ``transform_many(data_list)`` method (:class:`LapPE`,
    :class:`RWSE`, :class:`PECompose`) use it; a :class:`torch_geometric.transforms.Compose`
    is unrolled so that its members can; any other transform is applied graph by graph.
    The inputs are not modified. ``transform=None`` returns the graphs unchanged. The cyclic
    garbage collector is paused meanwhile (:func:`graphbench.speedups.gc_pause.gc_paused`): the copies
    and tensors made per graph would make it rescan the whole dataset again and again (on
    Peptides-func, ~0.5 s of RWSE's ~3 s with the dataset loaded).
    """
    if transform is None:
        return list(data_list)
    with gc_paused():
        return _apply_many(transform, list(data_list))


def _apply_many(transform: Any, data_list: list[Data]) -> list[Data]:
    if hasattr(transform, "transform_many"):
        return list(transform.transform_many(data_list))
    if isinstance(transform, Compose):
        for sub in transform.transforms:
            data_list = _apply_many(sub, data_list)
        return data_list
    return [transform(data) for data in data_list]


def parallel_map(fn: Callable[[Any], Any], items: list[Any]) -> list[Any]:
    r"""``[fn(item) for item in items]`` in a thread pool of ``torch.get_num_threads()`` workers, with
    torch's intra-op threads set to 1 meanwhile (restored afterwards): for kernels that run on one
    thread and release the GIL (RWSE's Numba loops), the pool is what puts every core to work."""
    workers = min(torch.get_num_threads(), len(items))
    if workers <= 1:
        return [fn(item) for item in items]
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(fn, items))
    finally:
        torch.set_num_threads(previous)


def num_nodes(data: Data) -> int:
    """``data.num_nodes``, with 0 for a graph that has no nodes (PyG gives ``None``)."""
    n = data.num_nodes
    return 0 if n is None else int(n)
