r"""ClusterGCN (Chiang et al. 2019, "Cluster-GCN: An Efficient Algorithm for Training Deep and Large
Graph Convolutional Networks"): METIS splits the graph into ``num_parts`` parts; every batch joins
``parts_per_batch`` random parts with the subgraph they induce, the edges between those parts included
(the paper's "stochastic multiple partitions", Sec. 3.2).

PyG's :class:`~torch_geometric.loader.ClusterData` and
:class:`~torch_geometric.loader.ClusterLoader` do the batching in pure torch; only their METIS call
needs pyg-lib or torch-sparse. :class:`MetisClusterData` gives them a partition computed with
``pymetis`` instead (the same METIS library PyG's extras wrap; pymetis is used whether or not they
are installed, so that the parts, and hence the batches, do not depend on the installation).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch.utils.data import DataLoader
from torch_geometric.data import Data
from torch_geometric.loader import ClusterData, ClusterLoader
from torch_geometric.utils import remove_self_loops, to_undirected

from graphbench.data.samplers.base import Sampler
from graphbench.data.samplers.context import SamplerContext, positive_int
from graphbench.vocabulary.errors import ArgumentError


def metis_parts(edge_index: Tensor, num_nodes: int, num_parts: int, seed: int = 0) -> Tensor:
    """The part (``0 .. num_parts - 1``) of every node under METIS's k-way partition (Karypis &
    Kumar 1998) of the graph made undirected and loop-free, as METIS requires; deterministic given
    ``seed`` (METIS's own random seed)."""
    import pymetis

    if num_parts == 1:
        return torch.zeros(num_nodes, dtype=torch.long)
    edge_index, _ = remove_self_loops(edge_index)
    edge_index = to_undirected(edge_index, num_nodes=num_nodes)  # sorted by source, duplicates removed
    xadj = torch.zeros(num_nodes + 1, dtype=torch.long)
    xadj[1:] = torch.cumsum(torch.bincount(edge_index[0], minlength=num_nodes), 0)
    dtype = np.int32 if edge_index.size(1) < 2**31 else np.int64
    adjacency = pymetis.CSRAdjacency(adj_starts=xadj.numpy().astype(dtype), adjacent=edge_index[1].numpy().astype(dtype))
    _, membership = pymetis.part_graph(num_parts, adjacency, options=pymetis.Options(seed=seed), recursive=False)
    return torch.as_tensor(np.asarray(membership), dtype=torch.long)


class MetisClusterData(ClusterData):
    """:class:`~torch_geometric.loader.ClusterData` with a given node-to-part vector ``parts`` (e.g.
    from :func:`metis_parts`), so that no compiled METIS is needed. ``n_id`` (the nodes' ids in the
    original graph) travels with the permuted node attributes."""

    def __init__(self, data: Data, num_parts: int, parts: Tensor) -> None:
        if parts.numel() != data.num_nodes or int(parts.max()) >= num_parts or int(parts.min()) < 0:
            raise ValueError(f"parts must give each of the {data.num_nodes} nodes a part in 0..{num_parts - 1}")
        self._parts = parts
        data = data.clone()
        data.n_id = torch.arange(data.num_nodes, device=parts.device)
        super().__init__(data, num_parts, log=False)

    def _metis(self, edge_index: Tensor, num_nodes: int) -> Tensor:
        return self._parts


class ClusterGCN(Sampler):
    r"""``sampler=cluster_gcn``: ``num_parts`` METIS parts (computed once per graph, seed
    ``metis_seed``, and cached), batches of ``parts_per_batch`` parts drawn without replacement each
    epoch; the loss counts the training nodes of the batch (Chiang et al. 2019, Alg. 1)."""

    name = "cluster_gcn"

    def __init__(self, *, num_parts: int, parts_per_batch: int, metis_seed: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_parts = positive_int(num_parts, "num_parts")
        self.parts_per_batch = positive_int(parts_per_batch, "parts_per_batch")
        self.metis_seed = int(metis_seed)
        self._cluster_data: MetisClusterData | None = None

    def cluster_data(self, graph: Data, context: SamplerContext) -> MetisClusterData:
        if self.num_parts > graph.num_nodes:
            raise ArgumentError(f"num_parts={self.num_parts} exceeds the graph's {graph.num_nodes} nodes")
        if self._cluster_data is None:

            def build() -> Tensor:
                return metis_parts(graph.edge_index, graph.num_nodes, self.num_parts, self.metis_seed)

            parts = context.cache("metis", (self.num_parts, self.metis_seed), build)
            self._cluster_data = MetisClusterData(graph, self.num_parts, parts)
        return self._cluster_data

    def train_loader(self, graph: Data, context: SamplerContext) -> DataLoader:
        return ClusterLoader(
            self.cluster_data(graph, context),
            batch_size=self.parts_per_batch,
            num_workers=context.num_workers,
            persistent_workers=context.num_workers > 0,
            **context.train_order(self.num_parts),  # in DDP, each rank draws from its own parts
        )
