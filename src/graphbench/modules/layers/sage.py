"""GraphSAGE (Hamilton et al., 2017, "Inductive Representation Learning on Large Graphs")."""

from __future__ import annotations

from torch import Tensor, nn
from torch_geometric.nn import SAGEConv


class SAGELayer(nn.Module):
    r"""GraphSAGE with the mean aggregator (Hamilton et al., 2017, Alg. 1, the concatenation
    :math:`W[h_i \,\|\, \mathrm{mean}_j h_j]` written as two matrices):

    .. math::
        x_i' = W_1 x_i + W_2 \frac{1}{|N(i)|} \sum_{j \in N(i)} x_j + b,

    with an optional :math:`\ell_2` normalization of :math:`x_i'` (``normalize``). Nodes without
    in-neighbours aggregate zero. GraphSAGE has no use for edge features: ``edge_attr`` passes
    through unchanged. ``edge_index[1]`` is the receiving node ``i``."""

    updates_edges = False
    uses_edge_attr = False

    def __init__(self, in_dim: int, out_dim: int, edge_dim: int, aggr: str = "mean", normalize: bool = False) -> None:
        super().__init__()
        self.conv = SAGEConv(in_dim, out_dim, aggr=aggr, normalize=normalize)

    def reset_parameters(self) -> None:
        self.conv.reset_parameters()

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None) -> tuple[Tensor, Tensor | None]:
        return self.conv(x, edge_index), edge_attr
