"""GIN with edge features (Hu et al., 2020, "Strategies for Pre-training Graph Neural Networks")."""

from __future__ import annotations

from torch import Tensor, nn
from torch_geometric.nn import GINEConv


class GINELayer(nn.Module):
    r""":math:`x_i' = \mathrm{MLP}\big((1+\epsilon) x_i + \sum_{j \in N(i)} \mathrm{ReLU}(x_j + e_{ji})\big)`
    with a 2-layer MLP (Linear -> ReLU -> Linear) and learnable :math:`\epsilon`."""

    updates_edges = False

    def __init__(self, in_dim: int, out_dim: int, edge_dim: int) -> None:
        super().__init__()
        mlp = nn.Sequential(nn.Linear(in_dim, out_dim), nn.ReLU(), nn.Linear(out_dim, out_dim))
        self.conv = GINEConv(mlp, train_eps=True, edge_dim=edge_dim if edge_dim != in_dim else None)

    def reset_parameters(self) -> None:
        self.conv.reset_parameters()

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None) -> tuple[Tensor, Tensor | None]:
        if edge_attr is None:
            raise ValueError("gine needs edge features; the network gives every graph at least a constant one")
        return self.conv(x, edge_index, edge_attr), edge_attr
