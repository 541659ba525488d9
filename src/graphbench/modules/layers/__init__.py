"""Message-passing layers, one module each, and their contract (:mod:`.contract`): every layer subclasses
:class:`~graphbench.modules.layers.contract.Layer`, maps ``(x, edge_index, edge_attr) -> (x, edge_attr)``
and declares how :class:`~graphbench.modules.network.GraphNetwork` calls it (``updates_edges``,
``uses_edge_attr``, ``uses_edge_weight``, ``uses_plan``, ``needs_batch``, ``self_contained``; the table
with their meanings and defaults is in :mod:`.contract`). ``__all__`` is the registry of layers (every one is checked against the contract in
tests/modules/layers/test_contract.py); a new layer is one module here, a line below and one
``conf/model/<name>.yaml``.
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
