"""Residual gated graph convnet (Bresson & Laurent, 2017), in the form of Benchmarking GNNs."""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch_geometric.utils import scatter


class GatedGCNLayer(nn.Module):
    r"""Edge-gated message passing with explicit edge features (Dwivedi et al., 2020, eq. 16-18):

    .. math::
        \hat e_{ij} = C e_{ij} + D h_i + E h_j, \qquad \sigma_{ij} = \mathrm{sigmoid}(\hat e_{ij}),

        h_i' = A h_i + \frac{\sum_{j \in N(i)} \sigma_{ij} \odot B h_j}{\sum_{j \in N(i)} \sigma_{ij} + \varepsilon}.

    Returns :math:`(h', \hat e)`; normalization, activation, dropout and the residual connection of
    both are applied by the network around the layer. ``edge_index[1]`` is the receiving node ``i``.
    """

    updates_edges = True

    def __init__(self, in_dim: int, out_dim: int, edge_dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.A = nn.Linear(in_dim, out_dim)
        self.B = nn.Linear(in_dim, out_dim)
        self.C = nn.Linear(edge_dim, out_dim)
        self.D = nn.Linear(in_dim, out_dim)
        self.E = nn.Linear(in_dim, out_dim)
        self.eps = eps

    def reset_parameters(self) -> None:
        for lin in (self.A, self.B, self.C, self.D, self.E):
            lin.reset_parameters()

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None) -> tuple[Tensor, Tensor | None]:
        if edge_attr is None:
            raise ValueError("gatedgcn needs edge features; the network gives every graph at least a constant one")
        src, dst = edge_index
        e_hat = self.C(edge_attr) + self.D(x)[dst] + self.E(x)[src]
        gate = torch.sigmoid(e_hat)
        num = scatter(gate * self.B(x)[src], dst, dim=0, dim_size=x.size(0), reduce="sum")
        den = scatter(gate, dst, dim=0, dim_size=x.size(0), reduce="sum")
        return self.A(x) + num / (den + self.eps), e_hat
