r"""Mini-batch samplers for one-graph node (and link) tasks, behind PyG's loader interfaces, in pure
torch where PyG needs its compiled extras: ``full`` (:class:`FullBatch`), ``neighbor``
(:class:`NeighborSampling`, Hamilton et al. 2017), ``cluster_gcn`` (:class:`ClusterGCN`, Chiang et
al. 2019) and ``saint_node`` / ``saint_edge`` / ``saint_rw`` (:class:`SaintNode`, :class:`SaintEdge`,
:class:`SaintRandomWalk`, Zeng et al. 2020), one per ``conf/sampler/*.yaml``.

What a sampled batch carries for the task module: ``n_id`` (the nodes' ids in the graph); for
neighbor sampling a ``{split}_mask`` that marks the seed nodes only; for GraphSAINT ``loss_weight``
(the loss normalization) and ``edge_weight`` (the aggregator normalization :math:`1/\alpha_{u,v}`).
The network hands ``edge_weight`` to the layers that take it (``uses_edge_weight``, see
:mod:`graphbench.modules.layers`): GCN, APPNP, GCNII and MixHop inside GCN's normalization, SAGE as a
weighted mean (or sum), GIN and GINE as a weighted sum; attention, gating and kernel layers (GAT,
GATv2, GatedGCN, MoNet, GPS) and MLP ignore it, and there the subgraph's plain aggregation is used.

The modules: :mod:`~graphbench.data.samplers.base` (the interface and full-batch training),
:mod:`~graphbench.data.samplers.context` (what a sampler is handed, shared checks),
:mod:`~graphbench.data.samplers.neighbor` and :mod:`~graphbench.data.samplers.neighbor_loader`
(neighbor sampling), :mod:`~graphbench.data.samplers.cluster_gcn`, :mod:`~graphbench.data.samplers.saint`.
"""

from graphbench.data.samplers.base import FullBatch, Sampler
from graphbench.data.samplers.cluster_gcn import ClusterGCN, MetisClusterData, metis_parts
from graphbench.data.samplers.context import SamplerContext, SeedMask, no_cache
from graphbench.data.samplers.neighbor import NeighborSampling
from graphbench.data.samplers.neighbor_loader import TorchNeighborSampler, sample_neighbors
from graphbench.data.samplers.saint import GraphSAINT, SaintEdge, SaintNode, SaintRandomWalk

__all__ = [
    "ClusterGCN",
    "FullBatch",
    "GraphSAINT",
    "MetisClusterData",
    "NeighborSampling",
    "SaintEdge",
    "SaintNode",
    "SaintRandomWalk",
    "Sampler",
    "SamplerContext",
    "SeedMask",
    "TorchNeighborSampler",
    "metis_parts",
    "no_cache",
    "sample_neighbors",
]
