"""What a sampler is handed by its DataModule (:class:`SamplerContext`), and the small pieces every
sampler shares: argument checks, the seed mask of a sampled batch, the DataModule's cache of built
sampler structures."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import torch
from omegaconf import ListConfig
from torch import Tensor
from torch_geometric.data import Data

from graphbench.data.store.sharding import Shard, eval_share, train_sampler
from graphbench.vocabulary.errors import ArgumentError

T = TypeVar("T")


@dataclass(frozen=True)
class SamplerContext:
    """What a DataModule hands its sampler besides the graph: loader workers, a cache for what a
    sampler precomputes once per graph (METIS parts, GraphSAINT's normalization):
    ``cache(name, params, build)`` returns ``build()``, stored in the dataset's cache directory under a
    key made of the dataset's own key, ``name`` and ``params``; and, in a data-parallel run, this
    process's ``shard`` with the ``seed`` that every rank shares (so that all draw the same
    permutation of the training seeds and each takes its own part of it)."""

    num_workers: int
    cache: Callable[[str, tuple[Any, ...], Callable[[], Any]], Any]
    shard: Shard | None = None
    seed: int = 0

    @property
    def distributed(self) -> bool:
        return self.shard is not None and self.shard.distributed

    def train_order(self, num_items: int) -> dict[str, Any]:
        """The loader arguments that order ``num_items`` training items (seed nodes, METIS parts):
        shuffled in one process; in a data-parallel run, this rank's part of a permutation shared by
        all ranks, padded so that every rank takes the same number of steps
        (:func:`graphbench.data.store.sharding.train_sampler`; Lightning calls its ``set_epoch``)."""
        if not self.distributed:
            return {"shuffle": True}
        assert self.shard is not None
        return {"shuffle": False, "sampler": train_sampler(num_items, self.shard, self.seed)}

    def eval_nodes(self, graph: Data, split: str) -> Tensor:
        """The nodes of ``split`` (``{split}_mask``) that this process evaluates: all of them in one
        process, a contiguous unpadded share in a data-parallel run (every node in exactly one share)."""
        nodes = graph[f"{split}_mask"].nonzero().view(-1)
        if not self.distributed:
            return nodes
        assert self.shard is not None
        return eval_share(nodes, self.shard)  # type: ignore[arg-type,return-value]  # a tensor slices like a sequence


def no_cache(name: str, params: tuple[Any, ...], build: Callable[[], T]) -> T:
    """A :class:`SamplerContext` cache that builds every time (tests, benchmarks)."""
    return build()


class SeedMask:
    r"""Loader transform for neighbor-sampled batches: the ``{split}_mask`` of a batch marks its
    ``batch_size`` seed nodes only (they come first), so that the loss and the metrics count each
    seed once, with its sampled neighbourhood, and never a neighbour that happens to be labelled."""

    def __init__(self, split: str) -> None:
        self.split = split

    def __call__(self, data: Data) -> Data:
        mask = torch.zeros(data.num_nodes, dtype=torch.bool, device=data.edge_index.device)
        mask[: data.batch_size] = True
        data[f"{self.split}_mask"] = mask
        return data


def positive_int(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ArgumentError(f"{key}={value!r} must be a positive integer")
    return value


def fanouts(value: Any, key: str) -> list[int]:
    """A list of fan-outs, one per hop: positive integers, or -1 for every neighbour."""
    values = list(value) if isinstance(value, (list, tuple, ListConfig)) else None
    if not values or any(isinstance(v, bool) or not isinstance(v, int) or (v < 1 and v != -1) for v in values):
        raise ArgumentError(f"{key}={value!r} must be a non-empty list of fan-outs per hop (positive integers or -1 for all)")
    return values
