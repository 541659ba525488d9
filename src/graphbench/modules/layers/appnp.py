"""Predict then propagate: APPNP (Klicpera, Bojchevski & Günnemann, ICLR 2019)."""

from __future__ import annotations

from torch import Tensor, nn
from torch_geometric.nn import APPNP

from graphbench.modules.activations import make_activation
from graphbench.modules.layers.contract import Layer, gcn_product
from graphbench.modules.propagation import EdgePlan


class APPNPLayer(Layer):
    r"""The prediction-then-propagation step of APPNP:
    :math:`H = \mathrm{Dropout}(\sigma(X))\,W + b`, then :math:`K` steps of personalized-PageRank
    propagation :math:`Z^{(k+1)} = (1 - \alpha)\,\hat D^{-1/2} \hat A \hat D^{-1/2} Z^{(k)} + \alpha H`,
    :math:`Z^{(0)} = H` (PyG's :class:`~torch_geometric.nn.conv.APPNP`), with dropout
    ``edge_dropout`` on the propagation matrix during training.

    Used as the network's one, predicting layer (``num_layers: 1``, ``last_layer_outputs: true``)
    after the input encoder, the network is Klicpera et al.'s:
    ``Dropout -> Linear(F -> hidden) -> ReLU -> Dropout -> Linear(hidden -> C) -> APPNP(K, alpha)``.
    Edge features are not used. ``edge_weight`` (``[E]``, e.g. GraphSAINT's :math:`1/\alpha_{u,v}`)
    weighs :math:`A` inside the normalization of :math:`\hat A`, as in GCN (``APPNP(x, edge_index,
    edge_weight)``).

    Without adjacency dropout (``edge_dropout: 0``, or in evaluation) the :math:`K` products run on the
    network's :class:`~graphbench.modules.propagation.EdgePlan` (its normalized adjacency, built once
    per batch; one batched sparse product under :func:`torch.func.vmap`); with it, PyG's
    :class:`~torch_geometric.nn.conv.APPNP`, which draws the dropped edges.
    """

    uses_edge_attr = False
    uses_plan = True
    uses_edge_weight = True

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        edge_dim: int,
        *,
        K: int = 10,
        alpha: float = 0.1,
        dropout: float = 0.5,
        edge_dropout: float = 0.0,
        activation: str = "relu",
    ) -> None:
        super().__init__()
        self.act = make_activation(activation)
        self.dropout = nn.Dropout(dropout)
        self.linear = nn.Linear(in_dim, out_dim)
        self.propagate = APPNP(K=K, alpha=alpha, dropout=edge_dropout)

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
        h = self.linear(self.dropout(self.act(x)))
        if self.training and self.propagate.dropout > 0.0:
            return self.propagate(h, edge_index, edge_weight), edge_attr
        plan = self.gcn_plan_for(plan, edge_index, x.size(0), edge_weight)
        alpha, z = self.propagate.alpha, h
        for _ in range(self.propagate.K):
            z = (1.0 - alpha) * gcn_product(plan, z) + alpha * h
        return z, edge_attr
