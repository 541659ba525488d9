"""Graph isomorphism network (Xu et al., 2019, "How Powerful are Graph Neural Networks?")."""

from __future__ import annotations

from torch import Tensor, nn
from torch_geometric.nn import GINConv

from graphbench.modules.layers.contract import Layer
from graphbench.modules.propagation import weighted_sum_at_dst


class GINLayer(Layer):
    r""":math:`x_i' = \mathrm{MLP}\big((1+\epsilon) x_i + \sum_{j \in N(i)} x_j\big)` with a 2-layer MLP
    (Linear -> ReLU -> Linear) and learnable :math:`\epsilon` (initialised to 0), GIN-:math:`\epsilon`
    of Xu et al. (2019, eq. 4.1); ``train_eps=False`` fixes :math:`\epsilon = 0`, their GIN-0. GIN has no use for edge features (``gine`` is its edge-aware
    variant): ``edge_attr`` passes through unchanged.

    ``mlp_batch_norm=True`` puts a batch norm over the nodes between the MLP's hidden linear map and its
    ReLU, Linear -> BatchNorm -> ReLU -> Linear: the ``MLP`` of Xu et al.'s code (``models/mlp.py``) and
    of Benchmarking GNNs' ``layers/gin_layer.py`` (``n_mlp_GIN: 2``).

    With ``edge_weight`` (``[E]``, :math:`w_{ji}` on the edge :math:`j \to i`; GraphSAINT's
    :math:`1/\alpha_{j,i}`, with which the sum is the unbiased estimate of the full-graph sum) the sum
    is weighted, :math:`\sum_{j \in N(i)} w_{ji} x_j`; all weights 1 give the unweighted layer."""

    uses_edge_attr = False
    uses_edge_weight = True

    def __init__(self, in_dim: int, out_dim: int, edge_dim: int, *, train_eps: bool = True, mlp_batch_norm: bool = False) -> None:
        super().__init__()
        hidden: list[nn.Module] = [nn.Linear(in_dim, out_dim)]
        if mlp_batch_norm:
            hidden.append(nn.BatchNorm1d(out_dim))
        mlp = nn.Sequential(*hidden, nn.ReLU(), nn.Linear(out_dim, out_dim))
        self.conv = GINConv(mlp, train_eps=train_eps)

    def reset_parameters(self) -> None:
        self.conv.reset_parameters()

    def forward(
        self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None, edge_weight: Tensor | None = None
    ) -> tuple[Tensor, Tensor | None]:
        if edge_weight is None:
            return self.conv(x, edge_index), edge_attr
        aggregated = weighted_sum_at_dst(x.index_select(0, edge_index[0]), edge_weight, edge_index[1], x.size(0))
        return self.conv.nn(aggregated + (1 + self.conv.eps) * x), edge_attr
