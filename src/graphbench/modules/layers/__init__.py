"""Message-passing layers, one module each, and their contract (:mod:`.contract`): every layer subclasses
:class:`~graphbench.modules.layers.contract.Layer`, maps ``(x, edge_index, edge_attr) -> (x, edge_attr)``
and declares how :class:`~graphbench.modules.network.GraphNetwork` calls it (``updates_edges``,
``uses_edge_attr``, ``uses_edge_weight``, ``uses_plan``, ``needs_batch``, ``self_contained``; the table
with their meanings and defaults is in :mod:`.contract`). ``__all__`` is the registry of layers (every one is checked against the contract in
tests/modules/layers/test_contract.py); a new layer is one module here, a line below and one
``conf/model/<name>.yaml``.

The layers: :mod:`~graphbench.modules.layers.gcn`, :mod:`~graphbench.modules.layers.sage`,
:mod:`~graphbench.modules.layers.gin`, :mod:`~graphbench.modules.layers.gine`,
:mod:`~graphbench.modules.layers.gat`, :mod:`~graphbench.modules.layers.gatv2`,
:mod:`~graphbench.modules.layers.gatedgcn`, :mod:`~graphbench.modules.layers.monet`,
:mod:`~graphbench.modules.layers.gps`, :mod:`~graphbench.modules.layers.appnp`,
:mod:`~graphbench.modules.layers.gcnii`, :mod:`~graphbench.modules.layers.mixhop`,
:mod:`~graphbench.modules.layers.grand`, :mod:`~graphbench.modules.layers.mlp`.
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
