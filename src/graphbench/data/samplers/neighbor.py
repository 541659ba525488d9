"""``sampler=neighbor``: GraphSAGE's neighbor-sampled mini-batches, through the loaders of
:mod:`graphbench.data.samplers.neighbor_loader`."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch.utils.data import DataLoader
from torch_geometric.data import Data
from torch_geometric.loader import LinkNeighborLoader

from graphbench.data.samplers.base import Sampler
from graphbench.data.samplers.context import SamplerContext, fanouts, positive_int
from graphbench.data.samplers.neighbor_loader import TorchNeighborSampler, node_neighbor_loader


class NeighborSampling(Sampler):
    r"""``sampler=neighbor``: GraphSAGE's mini-batches (Hamilton et al. 2017, Alg. 2). Each batch
    holds ``batch_size`` training nodes (the seeds) and, hop by hop, ``num_neighbors[l]`` uniformly
    sampled in-neighbours of every node reached at the previous hop; the network runs on that
    subgraph and the loss counts the seeds only. For link prediction the seeds are the endpoints of
    ``batch_size`` training pairs (PyG's :class:`~torch_geometric.loader.LinkNeighborLoader`)."""

    name = "neighbor"

    def __init__(self, *, num_neighbors: list[int], batch_size: int, replace: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_neighbors = fanouts(num_neighbors, "num_neighbors")
        self.batch_size = positive_int(batch_size, "batch_size")
        self.replace = bool(replace)

    def train_loader(self, graph: Data, context: SamplerContext) -> DataLoader:
        seeds = graph.train_mask.nonzero().view(-1)
        return node_neighbor_loader(graph, "train", seeds, self.num_neighbors, self.batch_size, context, True, self.replace)

    def link_train_loader(self, graph: Data, pairs: Tensor, context: SamplerContext) -> DataLoader:
        return LinkNeighborLoader(
            graph,
            num_neighbors=self.num_neighbors,
            edge_label_index=pairs,
            edge_label=torch.ones(pairs.size(1), device=pairs.device),
            batch_size=self.batch_size,
            shuffle=True,
            neighbor_sampler=TorchNeighborSampler(graph, self.num_neighbors, replace=self.replace),
            num_workers=context.num_workers,
            persistent_workers=context.num_workers > 0,
        )
