"""The DataModule of node-level tasks: one graph whose nodes are split (transductive), or many graphs
whose nodes are all labelled and which are split by graph (inductive)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor
from torch.utils.data import DataLoader
from torch_geometric.data import Batch, Data

from graphbench.data.datamodules.graph_level import GraphLevelDataModule
from graphbench.data.samplers.base import FullBatch, Sampler
from graphbench.data.samplers.context import SamplerContext
from graphbench.data.sources.base import OneGraphNodeSource
from graphbench.data.splits import IGB_FRACTIONS, random_split_masks
from graphbench.data.store.cache import load_or_build
from graphbench.data.store.full_batch import full_batch_loader
from graphbench.data.store.graph_store import GraphStore
from graphbench.run.errors import ConfigError
from graphbench.run.record import SPLITS

#: the defaults of the options that only one-graph datasets have
ONE_GRAPH_DEFAULTS: dict[str, Any] = {
    "split_index": 0,
    "split_seed": 0,
    "split_fractions": (0.6, 0.2, 0.2),
    "normalize_features": False,
}


def row_normalize(x: Tensor) -> Tensor:
    r"""Row-normalized features :math:`x_i / \sum_j x_{ij}` (rows summing to 0 are left as they are),
    the preprocessing of Kipf & Welling (2017) (PyG's ``NormalizeFeatures``)."""
    return x / x.sum(dim=-1, keepdim=True).clamp(min=1.0)


class NodeLevelDataModule(GraphLevelDataModule):
    r"""Node classification (or regression), on either shape of source.

    **One graph** (``source.one_graph``, e.g. Cora, Texas, WikiCS): the source ships boolean
    ``{split}_mask`` vectors (``[N, S]`` when it ships ``S`` fixed splits). ``split`` is the source's
    ``fixed_split`` (``split_index`` picks one of the ``S``), ``random``: a ``split_fractions`` split
    of the nodes drawn with ``split_seed``, or ``igb``: IGB's labeled : unlabeled = 1 : 4 split with the
    labeled half for training and half for validation (10 / 10 / 80, drawn with ``split_seed``; the
    retraining on all labeled nodes is ``task=igb``'s). ``normalize_features`` row-normalizes ``x``. Every loader
    yields the whole graph, collated once (full batch), unless ``sampler`` (the ``sampler`` config
    group, :mod:`graphbench.data.samplers`) batches it: neighbor sampling, ClusterGCN or GraphSAINT
    for training, and full-graph or neighbor-sampled evaluation. The task module selects the nodes of
    its split with ``batch[f"{split}_mask"]``. :attr:`graph` is the set-up graph.

    **Many graphs** (e.g. PATTERN, CLUSTER, PascalVOC-SP): every node is labelled and the graphs are
    split. Graphs are mini-batched as at graph level, and the nodes of a split's graphs carry an
    all-true ``{split}_mask`` and ``n_id``, their position in the whole dataset (so that predictions
    of different graphs never share an index). ``split`` only describes the split there, and the
    one-graph options do not apply.
    """

    level = "node"

    def __init__(
        self,
        *,
        split: str | None = None,
        split_index: int | None = None,
        split_seed: int | None = None,
        split_fractions: tuple[float, float, float] | list[float] | None = None,
        normalize_features: bool | None = None,
        sampler: Sampler | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(split=split or "official", **kwargs)
        self.sampler = sampler if sampler is not None else FullBatch()
        if not self.source.one_graph and not self.sampler.is_full_batch:
            raise ConfigError(
                f"sampler={self.sampler.name} applies to one-graph datasets; {self.name} is split by graphs, "
                "which are mini-batched as they are (dataset.batch_size): use sampler=full"
            )
        options = {
            "split_index": split_index,
            "split_seed": split_seed,
            "split_fractions": split_fractions,
            "normalize_features": normalize_features,
        }
        self.graph: Data | None = None
        self.full_batch: Batch | None = None
        self._node_ids: Tensor | None = None
        if not self.source.one_graph:
            given = [key for key, value in options.items() if value is not None]
            if given:
                raise ConfigError(
                    f"dataset.{given[0]} applies to one-graph (transductive) datasets; {self.name} is split by graphs"
                )
            return
        if not isinstance(self.source, OneGraphNodeSource):
            raise ConfigError(f"{type(self.source).__name__}: a one-graph node source derives from OneGraphNodeSource")
        options = {key: ONE_GRAPH_DEFAULTS[key] if value is None else value for key, value in options.items()}
        fixed, count = self.source.fixed_split, self.source.num_fixed_splits
        self.split = split or fixed
        valid = (fixed, "random", "igb")
        if self.split not in valid:
            raise ConfigError(f"dataset.split={self.split!r} is not valid for {self.name}; valid: {list(valid)}")
        index = options["split_index"]
        if self.split == fixed and (isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count):
            raise ConfigError(
                f"dataset.split_index={index!r} is out of range for {self.name}: it ships {count} "
                f"fixed split(s), so split_index must be an integer in 0..{count - 1}"
            )
        self.split_index = index
        self.split_seed = options["split_seed"]
        self.split_fractions = tuple(float(f) for f in options["split_fractions"])
        if self.split == "random":
            random_split_masks(1, self.split_fractions, 0)  # type: ignore[arg-type]  # validates the fractions now, not at setup
        self.normalize_features = bool(options["normalize_features"])

    # -- one graph --------------------------------------------------------------------------------

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

    def setup(self, stage: str | None = None) -> None:
        if self.dataset is not None:
            return
        super().setup(stage)
        if not self.source.one_graph:
            return
        assert self.dataset is not None
        graph = self.dataset.get(0)
        del graph.idx
        graph = self._select_split(graph)
        if self.normalize_features:
            graph.x = row_normalize(graph.x)
        self.graph = graph
        self.dataset = GraphStore.from_list([graph])
        self.full_batch = Batch.from_data_list([graph])

    def use_split_masks(self, train_mask: Tensor, val_mask: Tensor, test_mask: Tensor) -> None:
        """Replace the split of the set-up one graph by these boolean node masks (e.g. the node subsets
        of :func:`graphbench.analysis.subset_training.train_on_nodes`); the loaders yield the graph with them."""
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

    # -- many graphs ------------------------------------------------------------------------------

    def split_dataset(self, split: str) -> GraphStore:
        if self.source.one_graph:
            return super().split_dataset(split)
        if self.dataset is None:
            self.setup()
        assert self.dataset is not None
        num_nodes = int(self.dataset.slices["x"][-1])
        if self._node_ids is None:
            self._node_ids = torch.arange(num_nodes)
        everywhere = torch.ones(1, dtype=torch.bool).expand(num_nodes)  # a view: no memory per node
        labelled = self.dataset.with_node_attributes({f"{split}_mask": everywhere, "n_id": self._node_ids})
        return labelled.index_select(self.splits[split])

    def check_devices(self, world_size: int) -> None:
        if self.source.one_graph and self.sampler.is_full_batch and world_size > 1:
            raise ConfigError(
                f"dataset '{self.name}' trains full-batch, which runs on one device: "
                f"set trainer.devices=1, or pick a mini-batch sampler (sampler=neighbor|cluster_gcn|saint_node|saint_edge|saint_rw)"
            )

    def _loader(self, split: str, shuffle: bool) -> DataLoader:
        if not self.source.one_graph:
            return super()._loader(split, shuffle)
        if self.full_batch is None:
            self.setup()
        assert self.full_batch is not None and self.graph is not None
        context = self.sampler_context()
        sampled = self.sampler.loader(self.graph, split, context)
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

    def sampler_context(self) -> SamplerContext:
        """Loader workers, the dataset's cache for what a sampler precomputes (METIS parts,
        GraphSAINT's normalization), and this process's shard of a data-parallel run."""

        def cache(name: str, params: tuple[Any, ...], build: Callable[[], Any]) -> Any:
            label = f"{self.name}: {self.sampler.name} {name}"
            return load_or_build(self._cache_path("sampler", name, *params), build, label)

        # every rank seeded the same global seed (seed_everything), so all draw the same permutation
        return SamplerContext(self.num_workers, cache, self.shard, torch.initial_seed())
