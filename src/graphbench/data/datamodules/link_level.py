"""The DataModule of link-level tasks: labelled node pairs in many graphs, or in one graph whose
edges are split (OGB's link property prediction)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor
from torch.utils.data import DataLoader
from torch_geometric.data import Data

from graphbench.data.datamodules.graph_level import GraphLevelDataModule
from graphbench.data.samplers.base import FullBatch, Sampler
from graphbench.data.samplers.context import SamplerContext
from graphbench.data.store.cache import load_or_build
from graphbench.run.errors import ConfigError

#: what a one-graph link source's graph carries besides the message-passing graph: the split's
#: positive (and negative) pairs [2, E], and the attributes of the validation edges [E, F]
SPLIT_EDGES: tuple[str, ...] = ("train_pos", "val_pos", "val_neg", "test_pos", "test_neg")
VAL_EDGE_ATTR = "val_pos_attr"


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


class LinkLevelDataModule(GraphLevelDataModule):
    r"""Link prediction and edge classification, on either shape of source.

    **Many graphs** (e.g. PCQM-Contact, TSP): every graph carries its labelled pairs
    (``edge_label_index``, ``edge_label``, a global ``edge_label_id``); graphs are mini-batched as at
    graph level.

    **One graph** (``source.one_graph``, e.g. ogbl-collab): the graph carries the split's pairs
    (:data:`SPLIT_EDGES`) besides the message-passing graph. Training batches hold the whole
    training graph and ``batch_size`` positive training pairs (the task module samples negatives);
    evaluation batches hold ``eval_batch_size`` (``null``: all) of the split's positive and negative
    pairs with their labels. ``use_val_edges_as_input`` adds the validation edges to the
    message-passing graph at test time (allowed by OGB's rules for collab). :attr:`graph` is the
    set-up message-passing graph.
    """

    level = "link"

    def __init__(
        self,
        *,
        eval_batch_size: int | None = None,
        use_val_edges_as_input: bool | None = None,
        sampler: Sampler | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        # sampler=neighbor: training batches are the sampled neighbourhoods of the pairs' endpoints
        # (PyG's LinkNeighborLoader); evaluation stays on the whole graph
        self.sampler = sampler if sampler is not None else FullBatch()
        if not self.source.one_graph and not self.sampler.is_full_batch:
            raise ConfigError(
                f"sampler={self.sampler.name} applies to one-graph datasets; {self.name} has its pairs in many graphs"
            )
        if not self.source.one_graph and (eval_batch_size is not None or use_val_edges_as_input):
            key = "eval_batch_size" if eval_batch_size is not None else "use_val_edges_as_input"
            raise ConfigError(f"dataset.{key} applies to one-graph link datasets; {self.name} has its pairs in many graphs")
        self.eval_batch_size = eval_batch_size
        self.use_val_edges_as_input = bool(use_val_edges_as_input)
        self.graph: Data | None = None
        self.split_edges: dict[str, Tensor] = {}

    def setup(self, stage: str | None = None) -> None:
        if self.dataset is not None:
            return
        super().setup(stage)
        if not self.source.one_graph:
            return
        assert self.dataset is not None
        graph = self.dataset.get(0)
        self.split_edges = {k: graph[k] for k in SPLIT_EDGES}
        self.val_pos_attr = graph[VAL_EDGE_ATTR]
        # everything but the split edges (positional encodings included) is message-passing input
        keep = {k: graph[k] for k in graph.keys() if k not in (*SPLIT_EDGES, VAL_EDGE_ATTR, "idx", "num_nodes")}
        self.graph = Data(**keep, num_nodes=graph.num_nodes)

    def _sampler_cache(self, name: str, params: tuple[Any, ...], build: Callable[[], Any]) -> Any:
        return load_or_build(self._cache_path("sampler", name, *params), build, f"{self.name}: {self.sampler.name} {name}")

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

    def check_devices(self, world_size: int) -> None:
        if self.source.one_graph and world_size > 1:
            raise ConfigError(
                f"dataset '{self.name}': link prediction on one graph runs on one device (its ranking metrics need "
                "every candidate of a query in one process); set trainer.devices=1"
            )

    def _loader(self, split: str, shuffle: bool) -> DataLoader:
        if not self.source.one_graph:
            return super()._loader(split, shuffle)
        if self.graph is None:
            self.setup()
        if split == "train":
            pairs = self.split_edges["train_pos"]
            assert self.graph is not None
            sampled = self.sampler.link_train_loader(self.graph, pairs, SamplerContext(self.num_workers, self._sampler_cache))
            if sampled is not None:
                return sampled
            labels = torch.ones(pairs.size(1))
        else:
            pos, neg = self.split_edges[f"{split}_pos"], self.split_edges[f"{split}_neg"]
            pairs = torch.cat([pos, neg], dim=1)
            labels = torch.cat([torch.ones(pos.size(1)), torch.zeros(neg.size(1))])
        batch_size = self.batch_size if split == "train" else self.eval_batch_size
        return DataLoader(
            range(pairs.size(1)),
            batch_size=batch_size or pairs.size(1),
            shuffle=shuffle,
            collate_fn=_LinkBatches(self._message_passing_graph(split), pairs, labels),
            num_workers=self.num_workers,
            persistent_workers=self.num_workers > 0,
        )
