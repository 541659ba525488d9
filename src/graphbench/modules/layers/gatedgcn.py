"""Residual gated graph convnet (Bresson & Laurent, 2017), in the form of Benchmarking GNNs."""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch_geometric.utils import scatter

from graphbench.modules.layers.contract import Layer
from graphbench.modules.propagation import EdgePlan


class GatedGCNLayer(Layer):
    r"""Edge-gated message passing with explicit edge features (Dwivedi et al., 2020, eq. 16-18):

    .. math::
        \hat e_{ij} = C e_{ij} + D h_i + E h_j, \qquad \sigma_{ij} = \mathrm{sigmoid}(\hat e_{ij}),

        h_i' = A h_i + \frac{\sum_{j \in N(i)} \sigma_{ij} \odot B h_j}{\sum_{j \in N(i)} \sigma_{ij} + \varepsilon}.

    Returns :math:`(h', \hat e)`; normalization, activation, dropout and the residual connection of
    both are applied by the network around the layer. ``edge_index[1]`` is the receiving node ``i``.

    ``sparse=True`` gathers and sums through the batch's
    :class:`~graphbench.modules.propagation.EdgePlan` and adds the gathered terms into one edge
    buffer, in place; ``sparse=False`` uses PyG's ``scatter`` and autograd's ``index_put``
    backward. Both agree up to float rounding.
    """

    updates_edges = True
    # ignores a batch's edge_weight (GraphSAINT's 1/alpha_uv): the learned edge gates replace the edge weights
    uses_edge_weight = False
    uses_plan = True

    def __init__(self, in_dim: int, out_dim: int, edge_dim: int, eps: float = 1e-6, sparse: bool = True) -> None:
        super().__init__()
        self.A = nn.Linear(in_dim, out_dim)
        self.B = nn.Linear(in_dim, out_dim)
        self.C = nn.Linear(edge_dim, out_dim)
        self.D = nn.Linear(in_dim, out_dim)
        self.E = nn.Linear(in_dim, out_dim)
        self.eps = eps
        self.sparse = sparse

    def reset_parameters(self) -> None:
        for lin in (self.A, self.B, self.C, self.D, self.E):
            lin.reset_parameters()

    def forward(
        self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None, plan: EdgePlan | None = None
    ) -> tuple[Tensor, Tensor | None]:
        if edge_attr is None:
            raise ValueError("gatedgcn needs edge features; the network gives every graph at least a constant one")
        if not self.sparse:
            return self._scatter_forward(x, edge_index, edge_attr)
        plan = self.plan_for(plan, edge_index, x.size(0))
        # the two gathered terms are added into C e's buffer in place (no backward reads it)
        e_hat = self.C(edge_attr).add_(plan.gather_dst(self.D(x))).add_(plan.gather_src(self.E(x)))
        gate = torch.sigmoid(e_hat)
        num = plan.scatter_dst(gate * plan.gather_src(self.B(x)))
        return self.A(x) + num / (plan.scatter_dst(gate) + self.eps), e_hat

    def _scatter_forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor) -> tuple[Tensor, Tensor]:
        src, dst = edge_index
        e_hat = self.C(edge_attr) + self.D(x)[dst] + self.E(x)[src]
        gate = torch.sigmoid(e_hat)
        num = scatter(gate * self.B(x)[src], dst, dim=0, dim_size=x.size(0), reduce="sum")
        den = scatter(gate, dst, dim=0, dim_size=x.size(0), reduce="sum")
        return self.A(x) + num / (den + self.eps), e_hat
