"""What every sampler choice (``conf/sampler/*.yaml``) shares: the interface the one-graph DataModules
call, full-batch training, and how validation and test are batched."""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from torch.utils.data import DataLoader
from torch_geometric.data import Data

from graphbench.data.samplers.context import SamplerContext, fanouts, positive_int
from graphbench.data.samplers.neighbor_loader import node_neighbor_loader
from graphbench.vocabulary.errors import ArgumentError, ConfigError

#: ``eval``: ``full`` runs validation and test as one forward pass over the whole graph
#: (full-neighbourhood inference); ``sampled`` batches the split's nodes with neighbor sampling
EVAL_MODES: tuple[str, ...] = ("full", "sampled")


class Sampler:
    """How a one-graph DataModule batches its graph: :meth:`train_loader` for training, and, per
    ``eval`` (:data:`EVAL_MODES`), full-graph or neighbor-sampled validation and test
    (``eval_num_neighbors`` fan-outs per hop, ``eval_batch_size`` seed nodes per batch).

    A loader returned as ``None`` means the whole graph in one batch (the DataModule's full batch).
    """

    #: the option's name in ``conf/sampler/``
    name: ClassVar[str] = "full"

    def __init__(self, *, eval: str = "full", eval_num_neighbors: list[int] | None = None, eval_batch_size: int = 4096) -> None:
        if eval not in EVAL_MODES:
            raise ArgumentError(f"eval={eval!r} is not one of {list(EVAL_MODES)}")
        self.eval = eval
        self.eval_batch_size = positive_int(eval_batch_size, "eval_batch_size")
        self.eval_num_neighbors = None
        if eval == "sampled":
            if eval_num_neighbors is None:
                raise ArgumentError("eval=sampled needs eval_num_neighbors (fan-outs per hop, e.g. [20, 20])")
            self.eval_num_neighbors = fanouts(eval_num_neighbors, "eval_num_neighbors")

    @property
    def is_full_batch(self) -> bool:
        return type(self) is Sampler or isinstance(self, FullBatch)

    def train_loader(self, graph: Data, context: SamplerContext) -> DataLoader | None:
        return None

    def eval_loader(self, graph: Data, split: str, context: SamplerContext) -> DataLoader | None:
        if self.eval == "full":
            return None
        assert self.eval_num_neighbors is not None
        return node_neighbor_loader(
            graph, split, context.eval_nodes(graph, split), self.eval_num_neighbors, self.eval_batch_size, context, shuffle=False
        )

    def loader(self, graph: Data, split: str, context: SamplerContext) -> DataLoader | None:
        return self.train_loader(graph, context) if split == "train" else self.eval_loader(graph, split, context)

    def link_train_loader(self, graph: Data, pairs: torch.Tensor, context: SamplerContext) -> DataLoader | None:
        """The training loader of one-graph link prediction; ``None``: the whole graph with every batch."""
        if self.is_full_batch:
            return None
        raise ConfigError(
            f"sampler={self.name} applies to node-level datasets; link-level datasets take sampler=full or sampler=neighbor"
        )


class FullBatch(Sampler):
    """``sampler=full``: every step sees the whole graph (the default). ``batch_size``: the positive
    training pairs per step of one-graph link prediction (``null``: all of them; its dataset's value
    comes from ``conf/sampler/pairs/<dataset>.yaml``); node-level full batch takes none."""

    name = "full"

    def __init__(self, *, batch_size: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.batch_size = None if batch_size is None else positive_int(batch_size, "batch_size")
