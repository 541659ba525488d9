"""The many-graph layout: graphs split by graph and mini-batched by graph, at every task level."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import torch
from torch import Tensor
from torch.utils.data import DataLoader

from graphbench.data.datamodules.schema import PAD_TO, ManyGraphsConfig
from graphbench.data.info import Level
from graphbench.data.samplers.base import FullBatch, Sampler
from graphbench.data.store.graph_store import GraphStore
from graphbench.data.store.loader import graph_loader
from graphbench.data.store.padding import Buckets, choose_buckets
from graphbench.vocabulary.errors import ArgumentError, ConfigError

if TYPE_CHECKING:
    from graphbench.data.datamodules.base import DataModule

log = logging.getLogger(__name__)


class ManyGraphs:
    r"""Many graphs with a fixed train/val/test split of the graphs, in mini-batches of ``batch_size``
    graphs (``dataset.batch_size`` means graphs per batch, at every level: a link-level batch holds
    the labelled pairs of its graphs, a node-level one the nodes of its graphs).

    The loaders gather bulk mini-batches on the CPU, or with ``batch_on_device`` (graph level only)
    on the training device from a copy of the dataset kept there
    (:class:`~graphbench.data.store.device_store.DeviceStore`): they then yield only each batch's graph
    ids, and no batch crosses from host to device. In a data-parallel run every process takes its
    shard of the graphs, all from one permutation (:func:`~graphbench.data.store.loader.graph_loader`).

    ``label_nodes`` (node level): the nodes of a split's graphs carry an all-true ``{split}_mask`` and
    ``n_id``, their position in the whole dataset (so that predictions of different graphs never
    share an index). ``pad_to`` (one of :data:`~graphbench.data.datamodules.schema.PAD_TO`) says how
    the batches are padded: ``buckets`` (graph level) pads each batch, where it is gathered, to the
    smallest of the :attr:`buckets` chosen at :meth:`setup` from the training split
    (:func:`~graphbench.data.store.padding.choose_buckets`, :func:`~graphbench.data.store.padding.pad_batch`).
    """

    def __init__(
        self, *, batch_size: int, batch_on_device: bool = False, pad_to: str = "none", label_nodes: bool = False
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ArgumentError(f"batch_size={batch_size!r} (graphs per batch) must be a positive integer")
        if not isinstance(batch_on_device, bool):
            raise ArgumentError(f"batch_on_device={batch_on_device!r} must be true or false")
        if pad_to not in PAD_TO:
            raise ArgumentError(f"pad_to={pad_to!r} is not one of {list(PAD_TO)}")
        self.batch_size = batch_size
        self.batch_on_device = batch_on_device
        self.pad_to = pad_to
        #: the padded batches' shapes (pad_to=buckets), chosen at setup
        self.buckets: Buckets | None = None
        self.label_nodes = label_nodes
        self._node_ids: Tensor | None = None
        #: many graphs are batched by graph (dataset.batch_size), never by a sampler, and have no one graph
        self.sampler: Sampler = FullBatch()
        self.graph: None = None

    @property
    def graphs_per_batch(self) -> int:
        return self.batch_size

    @property
    def pads_batches(self) -> bool:
        return self.pad_to == "buckets"

    def setup(self, dm: DataModule) -> None:
        assert dm.dataset is not None
        if self.batch_on_device and dm.dataset.plan() is None:
            raise ArgumentError(
                f"batch_on_device=true: {dm.name} has attributes that only PyG's per-graph collate batches "
                "(see graphbench.data.store.batching.batching_plan); set batch_on_device=false"
            )
        if self.pad_to == "buckets":
            slices = dm.dataset.slices
            self.buckets = choose_buckets(slices["x"].diff(), slices["edge_index"].diff(), dm.splits["train"], self.batch_size)
            sizes = ", ".join(f"{b.nodes:,}/{b.edges:,}" for b in self.buckets.sizes)
            log.info("%s: batches padded to %d graphs and buckets of nodes/edges %s", dm.name, self.buckets.graphs, sizes)

    def split_dataset(self, dm: DataModule, split: str) -> GraphStore:
        assert dm.dataset is not None
        if not self.label_nodes:
            return dm.dataset.index_select(dm.splits[split])
        num_nodes = int(dm.dataset.slices["x"][-1])
        if self._node_ids is None:
            self._node_ids = torch.arange(num_nodes)
        everywhere = torch.ones(1, dtype=torch.bool).expand(num_nodes)  # a view: no memory per node
        labelled = dm.dataset.with_node_attributes({f"{split}_mask": everywhere, "n_id": self._node_ids})
        return labelled.index_select(dm.splits[split])

    def loader(self, dm: DataModule, split: str, shuffle: bool) -> DataLoader:
        # every rank seeded the same global seed (seed_everything), so all draw the same permutation
        seed = torch.initial_seed()
        store = dm.split_dataset(split)
        return graph_loader(
            store, self.batch_size, shuffle, dm.num_workers, dm.shard, seed, ids_only=self.batch_on_device, buckets=self.buckets
        )

    def check_devices(self, dm: DataModule, world_size: int) -> None:
        """Graph-level loaders shard by graph, so they always can be split."""


def many_graphs_layout(name: str, config: ManyGraphsConfig, sampler: Sampler | None, *, level: Level) -> ManyGraphs:
    """The many-graph layout of dataset ``name`` at ``level``: ``config.batch_size`` graphs per batch
    (required), on the CPU or, at graph level only, with ``batch_on_device``; node-level graphs label
    their nodes (:class:`ManyGraphs`). The ``sampler`` group must stay ``full`` (graphs are batched as
    they are)."""
    if sampler is not None and (not sampler.is_full_batch or (isinstance(sampler, FullBatch) and sampler.batch_size is not None)):
        what = f"sampler={sampler.name}" if not sampler.is_full_batch else "sampler.batch_size"
        raise ConfigError(
            f"{what} applies to one-graph datasets; {name} is split by graphs, which are mini-batched as they are "
            "(dataset.batch_size graphs per batch): use sampler=full without a batch_size"
        )
    if config.batch_size is None:
        raise ArgumentError(f"batch_size is missing: {name} has many graphs; set it (graphs per batch)")
    if config.pad_to == "buckets" and level != "graph":
        raise ArgumentError(
            f"pad_to='buckets' pads the mini-batches of graph-level datasets; {name} is {level}-level: set pad_to=none"
        )
    if config.batch_on_device and level != "graph":
        raise ArgumentError(
            f"batch_on_device=true gathers graph-level mini-batches on the device; {name} is not graph-level, "
            "and its batches are built on the CPU: set batch_on_device=false"
        )
    return ManyGraphs(
        batch_size=config.batch_size, batch_on_device=config.batch_on_device, pad_to=config.pad_to, label_nodes=level == "node"
    )
