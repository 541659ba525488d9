r"""The layer contract: what :class:`~graphbench.modules.network.GraphNetwork` asks of a layer.

A layer is an ``nn.Module`` built as ``layer(in_dim=..., out_dim=..., edge_dim=...)`` (its other
arguments come from ``conf/model/<name>.yaml``) whose ``forward(x, edge_index, edge_attr, **extra)``
returns ``(x', edge_attr')``: ``x`` is ``[N, in_dim]``, ``x'`` is ``[N, out_dim]``, ``edge_index[1]`` is
the receiving node, and a layer that does not update edge features returns ``edge_attr`` unchanged.
Six boolean class attributes tell the network how to call the layer and what to put around it.
:class:`Layer` declares them all with their defaults; a layer subclasses it and overrides what differs:

=====================  =======  =====================================================================
attribute              default  meaning
=====================  =======  =====================================================================
``updates_edges``      False    ``edge_attr'`` is new: the network norms, activates, drops out and adds
                                the residual to edges too (GatedGCN)
``uses_edge_attr``     True     the layer reads ``edge_attr``; when no layer of the stack does, the
                                network builds no edge encoder and hands ``edge_attr=None``
``uses_edge_weight``   False    ``forward(..., edge_weight=w)`` gets a batch's ``edge_weight`` (``[E]``,
                                e.g. GraphSAINT's aggregator normalization :math:`1/\alpha_{u,v}`) when it
                                has one; a layer whose own coefficients replace edge weights (attention,
                                gates, kernels) leaves it False and the weights are ignored
``uses_plan``          False    ``forward(..., plan=plan)`` gets the batch's
                                :class:`~graphbench.modules.propagation.EdgePlan`, built once per forward
                                pass for all layers (with the batch's ``edge_weight``)
``needs_batch``        False    ``forward(..., batch=batch)`` gets the node-to-graph index (``[N]``, or
                                None for a single graph)
``self_contained``     False    the layer applies its own norms, residuals and dropout: the network uses
                                its output as is instead of wrapping it in norm -> activation -> dropout
                                -> residual (GPS, GCNII)
=====================  =======  =====================================================================

An attribute may also be set per instance when it depends on an argument (GPS updates edges only
with the GatedGCN local model). The network refuses a layer that is not a :class:`Layer` or whose attributes are not bools
(:func:`check_layer`) and then reads the six attributes directly.

Layers that declare ``uses_plan`` take the network's plan through :meth:`Layer.plan_for` (they only
gather and sum through it) or :meth:`Layer.gcn_plan_for` (they propagate with its GCN normalization,
which must carry the edge weights they were given), and build their own when called without one.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from graphbench.modules.propagation import EdgePlan
from graphbench.vocabulary.errors import ArgumentError

#: the attributes of the contract, in the order of the table above
CONTRACT: tuple[str, ...] = (
    "updates_edges",
    "uses_edge_attr",
    "uses_edge_weight",
    "uses_plan",
    "needs_batch",
    "self_contained",
)


class Layer(nn.Module):
    """Base class of every message-passing layer: declares the contract's attributes with their
    defaults (module docstring) and the plan set-up of the layers that declare ``uses_plan``."""

    updates_edges: bool = False
    uses_edge_attr: bool = True
    uses_edge_weight: bool = False
    uses_plan: bool = False
    needs_batch: bool = False
    self_contained: bool = False

    def plan_for(self, plan: EdgePlan | None, edge_index: Tensor, num_nodes: int) -> EdgePlan:
        """The network's ``plan``, or, for a layer called on its own, one built here from ``edge_index``.
        For layers that only gather and sum through the plan, whose edge weights they ignore."""
        return plan if plan is not None else EdgePlan(edge_index, num_nodes)

    def gcn_plan_for(self, plan: EdgePlan | None, edge_index: Tensor, num_nodes: int, edge_weight: Tensor | None) -> EdgePlan:
        r"""The plan whose GCN normalization :math:`\hat D^{-1/2}(A + I)\hat D^{-1/2}` weighs :math:`A`
        with ``edge_weight``: the network's ``plan``, which must have been built with this very
        ``edge_weight`` (the network builds it with the batch's), or, for a layer called on its own,
        one built here."""
        if plan is None:
            return EdgePlan(edge_index, num_nodes, edge_weight)
        if plan.edge_weight is not edge_weight:
            raise ValueError(f"{type(self).__name__}: the plan was built with other edge weights than the layer was given")
        return plan


def gcn_product(plan: EdgePlan, h: Tensor, self_loop_weight: float = 1.0) -> Tensor:
    r""":math:`\hat D^{-1/2}(A + wI)\hat D^{-1/2} h` (:math:`w` = ``self_loop_weight``) with the plan's normalized adjacency
    (:meth:`~graphbench.modules.propagation.EdgePlan.gcn_propagate`). The CPU's sparse CSR product
    has no half-precision kernel: under CPU autocast (``trainer.precision=bf16-mixed`` or
    ``16-mixed``) the product runs in float32, outside autocast (CUDA's has one)."""
    if h.device.type == "cpu" and torch.is_autocast_enabled("cpu"):
        with torch.autocast("cpu", enabled=False):
            return plan.gcn_propagate(h.float(), self_loop_weight)
    return plan.gcn_propagate(h, self_loop_weight)


def check_layer(layer: nn.Module) -> Layer:
    """``layer`` itself when it is a :class:`Layer` whose contract attributes are all bools; otherwise
    one line naming the layer, what it lacks and the fix."""
    wrong = [name for name in CONTRACT if not isinstance(getattr(layer, name, None), bool)]
    if isinstance(layer, Layer) and not wrong:
        return layer
    lacks = f"does not declare {', '.join(wrong)} as a bool" if wrong else "is not a graphbench.modules.layers.contract.Layer"
    raise ArgumentError(
        f"layer ({type(layer).__name__}) {lacks}; subclass graphbench.modules.layers.contract.Layer, "
        f"which declares {', '.join(CONTRACT)} with their defaults"
    )
