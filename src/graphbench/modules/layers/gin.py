"""Graph isomorphism network (Xu et al., 2019, "How Powerful are Graph Neural Networks?")."""

from __future__ import annotations

from torch import Tensor, nn
from torch_geometric.nn import GINConv


class GINLayer(nn.Module):
    r""":math:`x_i' = \mathrm{MLP}\big((1+\epsilon) x_i + \sum_{j \in N(i)} x_j\big)` with a 2-layer MLP
    (Linear -> ReLU -> Linear) and learnable :math:`\epsilon` (initialised to 0), GIN-:math:`\epsilon`
    of Xu et al. (2019, eq. 4.1). GIN has no use for edge features (``gine`` is its edge-aware
    variant): ``edge_attr`` passes through unchanged."""

    updates_edges = False
    uses_edge_attr = False

    def __init__(self, in_dim: int, out_dim: int, edge_dim: int) -> None:
        super().__init__()
        mlp = nn.Sequential(nn.Linear(in_dim, out_dim), nn.ReLU(), nn.Linear(out_dim, out_dim))
        self.conv = GINConv(mlp, train_eps=True)

    def reset_parameters(self) -> None:
        self.conv.reset_parameters()

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None) -> tuple[Tensor, Tensor | None]:
        return self.conv(x, edge_index), edge_attr
