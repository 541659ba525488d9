"""GIN with edge features (Hu et al., 2020, "Strategies for Pre-training Graph Neural Networks")."""

from __future__ import annotations

from torch import Tensor, nn
from torch_geometric.nn import GINEConv

from graphbench.modules.propagation import EdgePlan


class GINELayer(nn.Module):
    r""":math:`x_i' = \mathrm{MLP}\big((1+\epsilon) x_i + \sum_{j \in N(i)} \mathrm{ReLU}(x_j + e_{ji})\big)`
    with a 2-layer MLP (Linear -> ReLU -> Linear) and learnable :math:`\epsilon`.

    The parameters are those of PyG's :class:`~torch_geometric.nn.GINEConv`. With ``sparse=True``
    the gather and the sum over neighbours go through the batch's
    :class:`~graphbench.modules.propagation.EdgePlan` (sorted CSR incidence products shared by all
    layers); ``sparse=False`` calls ``GINEConv`` itself. Both agree up to float rounding.
    """

    updates_edges = False
    uses_plan = True

    def __init__(self, in_dim: int, out_dim: int, edge_dim: int, sparse: bool = True) -> None:
        super().__init__()
        mlp = nn.Sequential(nn.Linear(in_dim, out_dim), nn.ReLU(), nn.Linear(out_dim, out_dim))
        self.conv = GINEConv(mlp, train_eps=True, edge_dim=edge_dim if edge_dim != in_dim else None)
        self.sparse = sparse

    def reset_parameters(self) -> None:
        self.conv.reset_parameters()

    def forward(
        self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None, plan: EdgePlan | None = None
    ) -> tuple[Tensor, Tensor | None]:
        if edge_attr is None:
            raise ValueError("gine needs edge features; the network gives every graph at least a constant one")
        if not self.sparse:
            return self.conv(x, edge_index, edge_attr), edge_attr
        plan = plan if plan is not None else EdgePlan(edge_index, x.size(0))
        edge = edge_attr if self.conv.lin is None else self.conv.lin(edge_attr)
        aggregated = plan.scatter_dst((plan.gather_src(x) + edge).relu())
        return self.conv.nn(aggregated + (1 + self.conv.eps) * x), edge_attr
