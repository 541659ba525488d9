"""DataLoaders over a :class:`~graphbench.data.store.graph_store.GraphStore`: positions are sampled as
PyG's ``DataLoader`` samples them, and each batch is gathered in bulk
(:func:`graphbench.data.store.batching.gather_batch`), or, with ``ids_only``, handed out as its
:class:`GraphIds` to be gathered on the training device (:mod:`graphbench.data.store.device_store`);
with ``buckets``, each gathered batch is padded to its bucket (:mod:`graphbench.data.store.padding`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from torch import Tensor
from torch.utils.data import DataLoader
from torch_geometric.data import Batch

from graphbench.data.store.graph_store import GraphStore
from graphbench.data.store.padding import Buckets, PaddingCollater
from graphbench.data.store.sharding import Shard, eval_share, train_sampler


@dataclass(frozen=True)
class GraphIds:
    """A mini-batch not yet gathered: the indices of its graphs in the whole dataset, in batch order, and
    the buckets the gathered batch is padded to (``None``: not padded)."""

    ids: Tensor
    buckets: Buckets | None = None


class IdsCollater:
    """The ``collate_fn`` of :func:`graph_loader` with ``ids_only``: positions in a store view -> the
    :class:`GraphIds` of those graphs (the batch is gathered later, on the training device)."""

    def __init__(self, store: GraphStore, buckets: Buckets | None = None) -> None:
        self.store = store
        self.buckets = buckets

    def __call__(self, positions: list[int]) -> GraphIds:
        return GraphIds(self.store.graph_ids(positions), self.buckets)


class StoreCollater:
    """The ``collate_fn`` of :func:`graph_loader`: positions in a store view -> their ``Batch``."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store

    def __call__(self, positions: list[int]) -> Batch:
        return self.store.batch(positions)


def graph_loader(
    store: GraphStore,
    batch_size: int,
    shuffle: bool,
    num_workers: int = 0,
    shard: Shard | None = None,
    seed: int = 0,
    ids_only: bool = False,
    buckets: Buckets | None = None,
) -> DataLoader:
    """Mini-batches of ``store``: the same graphs in the same order as PyG's
    ``DataLoader(store, batch_size, shuffle)`` (the sampler draws positions alike), each batch
    gathered in bulk by :meth:`GraphStore.batch`, or with ``ids_only`` left as its
    :class:`GraphIds` for a :class:`~graphbench.data.store.device_store.DeviceStore` to gather. In a
    data-parallel run (``shard``), this rank's part only: a padded, ``seed``-ed permutation for
    training, an unpadded contiguous share for evaluation (:mod:`graphbench.data.store.sharding`).
    With ``buckets`` every batch is padded to the smallest bucket that fits it
    (:class:`~graphbench.data.store.padding.PaddingCollater`; with ``ids_only``, once gathered)."""
    positions: Sequence[int] = range(len(store))
    sampler = None
    if shard is not None and shard.distributed:
        if shuffle:
            sampler, shuffle = train_sampler(len(store), shard, seed), False
        else:
            positions = eval_share(positions, shard)
    collate_fn: IdsCollater | StoreCollater | PaddingCollater
    if ids_only:
        collate_fn = IdsCollater(store, buckets)
    else:
        gather = StoreCollater(store)
        collate_fn = gather if buckets is None else PaddingCollater(gather, buckets)
    return DataLoader(
        positions,
        batch_size=batch_size,
        shuffle=shuffle,
        sampler=sampler,
        num_workers=num_workers,
        persistent_workers=num_workers > 0,
        collate_fn=collate_fn,
    )
