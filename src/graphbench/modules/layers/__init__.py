r"""Message-passing layers. Each maps ``(x, edge_index, edge_attr) -> (x, edge_attr)``; layers that
do not update edge features return ``edge_attr`` unchanged and set ``updates_edges = False``.

Optional class attributes change how :class:`~graphbench.modules.network.GraphNetwork` calls a
layer: ``needs_batch = True`` passes the node-to-graph vector as ``forward(..., batch=batch)``,
``uses_plan = True`` passes the batch's :class:`~graphbench.modules.propagation.EdgePlan` (sparse
operators built once per batch for all layers) as ``forward(..., plan=plan)``,
``uses_edge_weight = True`` passes a batch's ``edge_weight`` (``[E]``, e.g. GraphSAINT's aggregator
normalization :math:`1/\alpha_{u,v}`) as ``forward(..., edge_weight=w)`` when the batch has one (GCN,
APPNP, GCNII, MixHop and GRAND weigh :math:`A` inside the GCN normalization, SAGE takes a weighted mean or sum,
GIN and GINE a weighted sum; ``False``, as in GAT, GATv2, GatedGCN, MoNet, GPS and MLP, whose own
coefficients replace edge weights: the weights are ignored), and
``self_contained = True`` means the layer applies its own norms, residuals and dropout, so the
network uses its output as is instead of wrapping it in norm -> activation -> dropout -> residual.
"""

from graphbench.modules.layers.appnp import APPNPLayer
from graphbench.modules.layers.gat import GATLayer
from graphbench.modules.layers.gatedgcn import GatedGCNLayer
from graphbench.modules.layers.gatv2 import GATv2Layer
from graphbench.modules.layers.gcn import GCNLayer
from graphbench.modules.layers.gcnii import GCNIILayer
from graphbench.modules.layers.gin import GINLayer
from graphbench.modules.layers.gine import GINELayer
from graphbench.modules.layers.gps import GPSLayer
from graphbench.modules.layers.grand import GRANDLayer
from graphbench.modules.layers.mixhop import MixHopLayer
from graphbench.modules.layers.mlp import MLPLayer
from graphbench.modules.layers.monet import MoNetLayer
from graphbench.modules.layers.sage import SAGELayer

__all__ = [
    "APPNPLayer",
    "GATLayer",
    "GATv2Layer",
    "GCNIILayer",
    "GCNLayer",
    "GINELayer",
    "GINLayer",
    "GPSLayer",
    "GRANDLayer",
    "GatedGCNLayer",
    "MLPLayer",
    "MixHopLayer",
    "MoNetLayer",
    "SAGELayer",
]
