"""Message-passing layers. Each maps ``(x, edge_index, edge_attr) -> (x, edge_attr)``; layers that
do not update edge features return ``edge_attr`` unchanged and set ``updates_edges = False``."""
from graphbench.modules.layers.gatedgcn import GatedGCNLayer
from graphbench.modules.layers.gcn import GCNLayer
from graphbench.modules.layers.gine import GINELayer
from graphbench.modules.layers.mlp import MLPLayer

__all__ = ["GCNLayer", "GINELayer", "GatedGCNLayer", "MLPLayer"]
