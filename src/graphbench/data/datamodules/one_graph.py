"""The one-graph layouts: one graph whose nodes (:class:`OneGraphNodes`) or edges
(:class:`OneGraphLinks`) are split, batched by a sampler (the ``sampler`` config group,
:mod:`graphbench.data.samplers`), which also owns their mini-batch sizes (``sampler.batch_size``).
Both hand their sampler the same :meth:`OneGraph.sampler_context`: loader workers, the dataset's
cache, and this process's shard of a data-parallel run with the seed every rank shares."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor
from torch.utils.data import DataLoader
from torch_geometric.data import Batch, Data

from graphbench.data.samplers.base import FullBatch, Sampler
from graphbench.data.samplers.context import SamplerContext
from graphbench.data.sources.base import OneGraphNodeSource
from graphbench.data.splits import IGB_FRACTIONS, random_split_masks
from graphbench.data.store.cache import load_or_build
from graphbench.data.store.full_batch import full_batch_loader
from graphbench.data.store.graph_store import GraphStore
from graphbench.vocabulary.errors import ArgumentError, ConfigError
from graphbench.vocabulary.splits import SPLITS

if TYPE_CHECKING:
    from graphbench.data.datamodules.base import DataModule

#: what a one-graph link source's graph carries besides the message-passing graph: the split's
#: positive (and negative) pairs [2, E], and the attributes of the validation edges [E, F]
SPLIT_EDGES: tuple[str, ...] = ("train_pos", "val_pos", "val_neg", "test_pos", "test_neg")
VAL_EDGE_ATTR = "val_pos_attr"


def row_normalize(x: Tensor) -> Tensor:
    r"""Row-normalized features :math:`x_i / \sum_j x_{ij}` (rows summing to 0 are left as they are),
    the preprocessing of Kipf & Welling (2017) (PyG's ``NormalizeFeatures``)."""
    return x / x.sum(dim=-1, keepdim=True).clamp(min=1.0)


class OneGraph:
    """What both one-graph layouts share: the sampler, the set-up graph (:attr:`graph`) and the
    sampler's context."""

    #: one graph: no graph batch size (the sampler's sizes batch it)
    graphs_per_batch: None = None
    #: one graph's batches are the sampler's subgraphs, never padded
    pads_batches: bool = False

    def __init__(self, sampler: Sampler | None) -> None:
        self.sampler = sampler if sampler is not None else FullBatch()
        if not isinstance(self.sampler, Sampler):
            raise ConfigError(f"sampler._target_ must build a graphbench Sampler, got {type(self.sampler).__name__}")
        self.graph: Data | None = None

    def split_dataset(self, dm: DataModule, split: str) -> GraphStore:
        assert dm.dataset is not None
        return dm.dataset.index_select(dm.splits[split])

    def sampler_context(self, dm: DataModule) -> SamplerContext:
        """Loader workers, the dataset's cache for what a sampler precomputes (METIS parts,
        GraphSAINT's normalization), and this process's shard of a data-parallel run."""

        def cache(name: str, params: tuple[Any, ...], build: Callable[[], Any]) -> Any:
            label = f"{dm.name}: {self.sampler.name} {name}"
            return load_or_build(dm.cache_path("sampler", name, *params), build, label)

        # every rank seeded the same global seed (seed_everything), so all draw the same permutation
        return SamplerContext(dm.num_workers, cache, dm.shard, torch.initial_seed())


class OneGraphNodes(OneGraph):
    r"""One graph whose nodes are split (transductive node tasks, e.g. Cora, Texas, WikiCS).

    The source ships boolean ``{split}_mask`` vectors (``[N, S]`` when it ships ``S`` fixed splits).
    ``split`` is the source's ``fixed_split`` (``split_index`` picks one of the ``S``), ``random``: a
    ``split_fractions`` split of the nodes drawn with ``split_seed``, or ``igb``: IGB's labeled :
    unlabeled = 1 : 4 split with the labeled half for training and half for validation (10 / 10 / 80,
    drawn with ``split_seed``; the retraining on all labeled nodes is ``task=igb``'s).
    ``normalize_features`` row-normalizes ``x``. Every loader yields the whole graph, collated once
    (:attr:`full_batch`), unless ``sampler`` batches it: neighbor sampling, ClusterGCN or GraphSAINT
    for training, and full-graph or neighbor-sampled evaluation. The task module selects the nodes of
    its split with ``batch[f"{split}_mask"]``.
    """

    def __init__(
        self,
        *,
        source: OneGraphNodeSource,
        name: str,
        split: str | None = None,
        split_index: int = 0,
        split_seed: int = 0,
        split_fractions: tuple[float, float, float] | list[float] = (0.6, 0.2, 0.2),
        normalize_features: bool = False,
        sampler: Sampler | None = None,
    ) -> None:
        super().__init__(sampler)
        if isinstance(self.sampler, FullBatch) and self.sampler.batch_size is not None:
            raise ConfigError(
                f"sampler.batch_size={self.sampler.batch_size} (positive pairs per step) applies to one-graph link datasets; "
                f"{name} trains node-level full batch on the whole graph: remove it, or pick sampler=neighbor|cluster_gcn|saint_*"
            )
        fixed, count = source.fixed_split, source.num_fixed_splits
        self.split = split or fixed
        valid = (fixed, "random", "igb")
        if self.split not in valid:
            raise ArgumentError(f"split={self.split!r} is not valid for {name}; valid: {list(valid)}")
        index = split_index
        if self.split == fixed and (isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count):
            raise ArgumentError(
                f"split_index={index!r} is out of range for {name}: it ships {count} "
                f"fixed split(s), so split_index must be an integer in 0..{count - 1}"
            )
        self.name = name
        self.split_index = index
        self.split_seed = split_seed
        self.split_fractions = tuple(float(f) for f in split_fractions)
        if self.split == "random":
            try:  # the fractions are checked now, not at setup
                random_split_masks(1, self.split_fractions, 0)  # type: ignore[arg-type]
            except ArgumentError:
                fractions = list(self.split_fractions)
                raise ArgumentError(f"split_fractions={fractions} must be three non-negative numbers summing to <= 1") from None
        self.normalize_features = bool(normalize_features)
        self.full_batch: Batch | None = None

    def _select_split(self, graph: Data) -> Data:
        if self.split == "random":
            masks = random_split_masks(graph.num_nodes, self.split_fractions, self.split_seed)  # type: ignore[arg-type]
        elif self.split == "igb":  # IGB (Li et al. 2022): 10 / 10 / 80, drawn with split_seed
            masks = random_split_masks(graph.num_nodes, IGB_FRACTIONS, self.split_seed)
        else:
            masks = {}
            for split in SPLITS:
                mask = graph[f"{split}_mask"]
                masks[f"{split}_mask"] = mask[:, self.split_index] if mask.dim() == 2 else mask
        for key, mask in masks.items():
            graph[key] = mask
        return graph

    def setup(self, dm: DataModule) -> None:
        assert dm.dataset is not None
        graph = dm.dataset.get(0)
        del graph.idx
        graph = self._select_split(graph)
        if self.normalize_features:
            graph.x = row_normalize(graph.x)
        self.graph = graph
        dm.dataset = GraphStore.from_list([graph])
        self.full_batch = Batch.from_data_list([graph])

    def use_split_masks(self, train_mask: Tensor, val_mask: Tensor, test_mask: Tensor) -> None:
        """Replace the split of the set-up graph by these boolean node masks; the loaders yield the
        graph with them."""
        if self.graph is None:
            raise ConfigError(f"{self.name}: use_split_masks needs a set-up one-graph (transductive) dataset")
        for split, mask in zip(SPLITS, (train_mask, val_mask, test_mask)):
            if mask.dtype != torch.bool or mask.shape != (self.graph.num_nodes,):
                raise ConfigError(
                    f"{self.name}: the {split} mask must be a boolean vector of {self.graph.num_nodes} nodes, "
                    f"got {tuple(mask.shape)} {mask.dtype}"
                )
            self.graph[f"{split}_mask"] = mask
        self.full_batch = Batch.from_data_list([self.graph])

    def loader(self, dm: DataModule, split: str, shuffle: bool) -> DataLoader:
        assert self.full_batch is not None and self.graph is not None
        context = self.sampler_context(dm)
        try:
            sampled = self.sampler.loader(self.graph, split, context)
        except ArgumentError as exc:  # an argument of the DataModule's sampler
            raise exc.under("sampler") from None
        if sampled is not None:
            return sampled
        if split == "train" or not context.distributed:
            return full_batch_loader(self.full_batch)
        # full-graph evaluation in a data-parallel run: every rank runs the whole graph and scores its
        # own share of the split's nodes (the metrics add the shares up once per epoch)
        batch = copy.copy(self.full_batch)
        mask = torch.zeros_like(batch[f"{split}_mask"])
        mask[context.eval_nodes(self.graph, split)] = True
        batch[f"{split}_mask"] = mask
        return full_batch_loader(batch)

    def check_devices(self, dm: DataModule, world_size: int) -> None:
        if self.sampler.is_full_batch and world_size > 1:
            raise ConfigError(
                f"dataset '{dm.name}' trains full-batch, which runs on one device: "
                f"set trainer.devices=1, or pick a mini-batch sampler (sampler=neighbor|cluster_gcn|saint_node|saint_edge|saint_rw)"
            )


class _LinkBatches:
    """Collate function: indices into a split's labelled pairs -> the full graph plus those pairs
    (``edge_label_index``, ``edge_label``, ``edge_label_id``)."""

    def __init__(self, graph: Data, pairs: Tensor, labels: Tensor) -> None:
        self.graph, self.pairs, self.labels = graph, pairs, labels

    def __call__(self, index: list[int]) -> Data:
        ids = torch.as_tensor(index, dtype=torch.long)
        batch = self.graph.clone()
        batch.edge_label_index, batch.edge_label, batch.edge_label_id = self.pairs[:, ids], self.labels[ids], ids
        return batch


class OneGraphLinks(OneGraph):
    r"""One graph whose edges are split (OGB's link property prediction, e.g. ogbl-collab).

    The graph carries the split's pairs (:data:`SPLIT_EDGES`) besides the message-passing graph
    (:attr:`graph`). With ``sampler=full`` training batches hold the whole training graph and
    ``sampler.batch_size`` positive training pairs (``null``: all of them; the task module samples
    negatives); with ``sampler=neighbor`` they are the sampled neighbourhoods of ``sampler.batch_size``
    pairs' endpoints (PyG's LinkNeighborLoader). Evaluation batches hold ``eval_batch_size`` (``null``:
    all) of the split's positive and negative pairs with their labels, on the whole graph.
    ``use_val_edges_as_input`` adds the validation edges to the message-passing graph at test time
    (allowed by OGB's rules for collab).
    """

    def __init__(
        self, *, eval_batch_size: int | None = None, use_val_edges_as_input: bool = False, sampler: Sampler | None = None
    ) -> None:
        super().__init__(sampler)
        if eval_batch_size is not None and (
            isinstance(eval_batch_size, bool) or not isinstance(eval_batch_size, int) or eval_batch_size < 1
        ):
            raise ArgumentError(f"eval_batch_size={eval_batch_size!r} must be a positive integer or null (all pairs)")
        self.eval_batch_size = eval_batch_size
        self.use_val_edges_as_input = bool(use_val_edges_as_input)
        self.split_edges: dict[str, Tensor] = {}
        self.val_pos_attr: Tensor | None = None

    def setup(self, dm: DataModule) -> None:
        assert dm.dataset is not None
        graph = dm.dataset.get(0)
        self.split_edges = {k: graph[k] for k in SPLIT_EDGES}
        self.val_pos_attr = graph[VAL_EDGE_ATTR]
        # everything but the split edges (positional encodings included) is message-passing input
        keep = {k: graph[k] for k in graph.keys() if k not in (*SPLIT_EDGES, VAL_EDGE_ATTR, "idx", "num_nodes")}
        self.graph = Data(**keep, num_nodes=graph.num_nodes)

    def _message_passing_graph(self, split: str) -> Data:
        assert self.graph is not None
        if split != "test" or not self.use_val_edges_as_input:
            return self.graph
        val = self.split_edges["val_pos"]
        graph = self.graph.clone()
        graph.edge_index = torch.cat([graph.edge_index, val, val.flip(0)], dim=1)
        if graph.edge_attr is not None:
            graph.edge_attr = torch.cat([graph.edge_attr, self.val_pos_attr, self.val_pos_attr])
        return graph

    def loader(self, dm: DataModule, split: str, shuffle: bool) -> DataLoader:
        assert self.graph is not None
        if split == "train":
            pairs = self.split_edges["train_pos"]
            sampled = self.sampler.link_train_loader(self.graph, pairs, self.sampler_context(dm))
            if sampled is not None:
                return sampled
            labels = torch.ones(pairs.size(1))
            batch_size = self.sampler.batch_size if isinstance(self.sampler, FullBatch) else None
        else:
            pos, neg = self.split_edges[f"{split}_pos"], self.split_edges[f"{split}_neg"]
            pairs = torch.cat([pos, neg], dim=1)
            labels = torch.cat([torch.ones(pos.size(1)), torch.zeros(neg.size(1))])
            batch_size = self.eval_batch_size
        return DataLoader(
            range(pairs.size(1)),
            batch_size=batch_size or pairs.size(1),
            shuffle=shuffle,
            collate_fn=_LinkBatches(self._message_passing_graph(split), pairs, labels),
            num_workers=dm.num_workers,
            persistent_workers=dm.num_workers > 0,
        )

    def check_devices(self, dm: DataModule, world_size: int) -> None:
        if world_size > 1:
            raise ConfigError(
                f"dataset '{dm.name}': link prediction on one graph runs on one device (its ranking metrics need "
                "every candidate of a query in one process); set trainer.devices=1"
            )
