"""GRAND's random propagation (Feng et al., NeurIPS 2020, "Graph Random Neural Network for
Semi-Supervised Learning on Graphs")."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from torch_geometric.nn.dense.linear import Linear as PyGLinear

from graphbench.modules.layers.contract import Layer, gcn_product
from graphbench.modules.propagation import EdgePlan
from graphbench.vocabulary.errors import ArgumentError


def drop_node(x: Tensor, rate: float, training: bool) -> Tensor:
    r"""DropNode as the authors' code runs it (THUDM/GRAND, ``rand_prop``): in training each node's
    whole feature row is kept with probability :math:`1 - \delta` and zeroed otherwise,
    :math:`\tilde X_i = \epsilon_i X_i` with :math:`\epsilon_i \sim \mathrm{Bernoulli}(1 - \delta)`; in
    evaluation every row is scaled by its expectation, :math:`\tilde X = (1 - \delta) X`.

    The paper's eq. (1) instead scales the kept rows by :math:`1/(1 - \delta)` and leaves evaluation
    unscaled; both give the same expected input, and they differ only by the constant factor
    :math:`1 - \delta` on the features, which the code (the source of the published numbers) applies."""
    if not 0.0 <= rate < 1.0:
        raise ArgumentError(f"rate={rate!r} must be in [0, 1)")
    if not training:
        return x * (1.0 - rate)
    keep = torch.full((x.size(0), 1), 1.0 - rate, dtype=x.dtype, device=x.device)
    return x * torch.bernoulli(keep)


def mixed_order_propagation(x: Tensor, plan: EdgePlan, order: int) -> Tensor:
    r"""GRAND's mixed-order propagation :math:`\bar X = \frac{1}{K + 1} \sum_{k=0}^{K} \hat A^k X` with
    :math:`\hat A = \hat D^{-1/2}(A + I)\hat D^{-1/2}` (the plan's GCN normalization,
    :meth:`~graphbench.modules.propagation.EdgePlan.gcn_propagate`), :math:`K` = ``order``."""
    if order < 0:
        raise ArgumentError(f"order={order!r} must be a non-negative integer")
    total, power = x, x
    for _ in range(order):
        power = gcn_product(plan, power)  # float32 under CPU autocast
        total = total + power
    return total / (order + 1)


class GRANDLayer(Layer):
    r"""GRAND's random propagation followed by the first layer of its MLP:

    .. math::
        H = \mathrm{Dropout}\Big(\frac{1}{K + 1} \sum_{k=0}^{K} \hat A^k \,\mathrm{DropNode}_\delta(X)\Big) W + b

    (:func:`drop_node`, :func:`mixed_order_propagation`), with ``dropout`` the paper's input dropout,
    applied after propagation. Every forward pass in training draws a new DropNode mask, so :math:`S`
    passes over the same batch are GRAND's :math:`S` data augmentations (the consistency term of
    :class:`~graphbench.modules.losses.ConsistencyLoss` compares them); in evaluation the pass is
    deterministic (rows scaled by :math:`1 - \delta`, no dropout).

    As the network's one layer reading the raw features (``encode_inputs: false``, ``num_layers: 1``,
    ``last_layer_outputs: false``, ``input_dropout: 0``), the network's block (ReLU, ``model.dropout``
    = the hidden dropout) and a linear head complete GRAND's two-layer MLP
    ``Dropout -> Linear(F -> hidden) -> ReLU -> Dropout -> Linear(hidden -> C)`` (conf/model/grand.yaml);
    a budget solves its hidden width. Edge features are not used; ``edge_weight`` weighs :math:`A` inside
    the normalization of :math:`\hat A`, as in GCN.
    """

    uses_edge_attr = False
    uses_plan = True
    uses_edge_weight = True

    def __init__(
        self, in_dim: int, out_dim: int, edge_dim: int, *, order: int = 8, drop_node: float = 0.5, dropout: float = 0.5
    ) -> None:
        super().__init__()
        if not isinstance(order, int) or order < 0:
            raise ArgumentError(f"order={order!r} must be a non-negative integer")
        if not 0.0 <= drop_node < 1.0:
            raise ArgumentError(f"drop_node={drop_node!r} must be in [0, 1)")
        self.order = order
        self.drop_node = float(drop_node)
        self.dropout = nn.Dropout(dropout)
        self.linear = nn.Linear(in_dim, out_dim)

    def reset_parameters(self) -> None:
        self.linear.reset_parameters()

    def forward(
        self,
        x: Tensor,
        edge_index: Tensor,
        edge_attr: Tensor | None,
        plan: EdgePlan | None = None,
        edge_weight: Tensor | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        plan = self.gcn_plan_for(plan, edge_index, x.size(0), edge_weight)
        propagated = mixed_order_propagation(drop_node(x, self.drop_node, self.training), plan, self.order)
        return self.linear(self.dropout(propagated)), edge_attr


def grand_init_(linear: nn.Linear | PyGLinear) -> None:
    r"""GRAND's initialization of a linear map :math:`x \mapsto xW + b` with :math:`W \in \mathbb{R}^{
    n_{\text{in}} \times n_{\text{out}}}` (THUDM/GRAND@7a2fd6e, ``pygcn/layers.py``, ``MLPLayer`` and
    ``GraphConvolution``, ``reset_parameters``): with :math:`s = 1 / \sqrt{n_{\text{out}}}` (``stdv = 1. /
    math.sqrt(self.weight.size(1))``, the weight stored as ``[in, out]``), every entry of :math:`W` and of
    :math:`b` is drawn as ``normal_(-stdv, stdv)``, i.e. :math:`\mathcal N(\mu = -s, \sigma = s)`: mean
    :math:`-1/\sqrt{n_{\text{out}}}`, standard deviation :math:`1/\sqrt{n_{\text{out}}}`.

    The weight is drawn in the source's ``[in, out]`` layout and stored transposed (PyTorch keeps
    ``[out, in]``), the bias after it, so the same generator state gives the source's values exactly."""
    out_features, in_features = linear.weight.shape
    stdv = 1.0 / math.sqrt(out_features)
    with torch.no_grad():
        weight = torch.empty(in_features, out_features, dtype=linear.weight.dtype, device=linear.weight.device)
        linear.weight.copy_(weight.normal_(-stdv, stdv).t())
        if linear.bias is not None:
            linear.bias.normal_(-stdv, stdv)


#: ``model.init``: ``default`` keeps every module's own (PyTorch's) initialization, ``grand`` redraws every
#: linear map as GRAND's code does (:func:`grand_init_`)
INITIALIZATIONS: tuple[str, ...] = ("default", "grand")


def initialize(network: nn.Module, init: str) -> nn.Module:
    """``network`` with ``init`` (:data:`INITIALIZATIONS`) applied: for ``grand``, :func:`grand_init_` on every
    ``torch.nn.Linear`` and PyG ``Linear`` in module order (for GRAND's network: the layer's map, then the
    head's, as ``MLP`` draws ``layer1`` then ``layer2``); other parameters keep their initialization."""
    if init not in INITIALIZATIONS:
        raise ArgumentError(f"init={init!r} is not an initialization; valid: {', '.join(INITIALIZATIONS)}")
    if init == "grand":
        for module in network.modules():
            if isinstance(module, (nn.Linear, PyGLinear)):
                grand_init_(module)
    return network
