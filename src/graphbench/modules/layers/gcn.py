"""Graph convolution (Kipf & Welling, 2017)."""

from __future__ import annotations

from torch import Tensor, nn
from torch_geometric.nn import GCNConv


class GCNLayer(nn.Module):
    r""":math:`X' = \hat D^{-1/2} \hat A \hat D^{-1/2} X W` with :math:`\hat A = A + I`.
    GCN has no use for edge features: ``edge_attr`` passes through unchanged."""

    updates_edges = False
    uses_edge_attr = False

    def __init__(self, in_dim: int, out_dim: int, edge_dim: int) -> None:
        super().__init__()
        self.conv = GCNConv(in_dim, out_dim)

    def reset_parameters(self) -> None:
        self.conv.reset_parameters()

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None) -> tuple[Tensor, Tensor | None]:
        return self.conv(x, edge_index), edge_attr
