r"""Dataset-level precomputation of positional/structural encodings.

Per-graph transforms (PyG's :class:`~torch_geometric.transforms.AddLaplacianEigenvectorPE`
and :class:`~torch_geometric.transforms.AddRandomWalkPE`) pay Python and small-kernel
overhead once per graph. :func:`precompute` lets a transform encode the whole list at once:
:meth:`RWSE.transform_many <graphbench.transforms.rwse.RWSE.transform_many>` walks the
block-diagonal matrix of hundreds of graphs at once (:func:`map_batched`),
spread over one worker thread per intra-op thread that torch is allowed to use;
:meth:`LapPE.transform_many <graphbench.transforms.lap_pe.LapPE.transform_many>` spreads
its per-graph LAPACK calls over processes. :class:`PECompose` chains PE transforms
(``pe=lappe+rwse``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.transforms import BaseTransform, Compose

from graphbench.gc_pause import gc_paused

#: Default upper bound on ``sum(n * n)`` over the graphs of one batched kernel call.
MAX_CHUNK_ELEMENTS: int = 1 << 20

BatchKernel = Callable[[Sequence[Data], Sequence[int]], list[dict[str, Tensor]]]


def map_batched(
    data_list: Sequence[Data],
    kernel: BatchKernel,
    max_elements: int = MAX_CHUNK_ELEMENTS,
    parallel: bool = True,
) -> list[dict[str, Tensor]]:
    r"""Runs ``kernel`` on consecutive chunks of ``data_list``.

    ``kernel(graphs, counts)`` (``counts``: the graphs' node counts, read once here) returns one
    ``{attr: tensor}`` dict per graph; the dicts come back in the order of ``data_list``. A chunk
    holds at most ``max_elements`` entries ``sum(n * n)`` over its graphs (at least one graph).
    With ``parallel=True`` chunks run in a thread pool of ``torch.get_num_threads()`` workers,
    with torch's intra-op threads set to 1 meanwhile (restored afterwards): the kernels (RWSE's
    Numba loops) run on one thread and release the GIL, so the pool is what puts every core to work.
    """
    chunks: list[tuple[list[Data], list[int]]] = []
    elements = 0
    for data in data_list:
        n = num_nodes(data)
        if not chunks or elements + max(n, 1) ** 2 > max_elements:
            chunks.append(([], []))
            elements = 0
        chunks[-1][0].append(data)
        chunks[-1][1].append(n)
        elements += max(n, 1) ** 2

    def run(chunk: tuple[list[Data], list[int]]) -> list[dict[str, Tensor]]:
        return kernel(*chunk)

    outputs = _parallel_map(run, chunks) if parallel else [run(chunk) for chunk in chunks]
    return [attrs for out in outputs for attrs in out]


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
    garbage collector is paused meanwhile (:func:`graphbench.gc_pause.gc_paused`): the copies
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


def _parallel_map(fn: Callable[[Any], Any], items: list[Any]) -> list[Any]:
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
