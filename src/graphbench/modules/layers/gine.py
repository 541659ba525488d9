"""GIN with edge features (Hu et al., 2020, "Strategies for Pre-training Graph Neural Networks")."""

from __future__ import annotations

from torch import Tensor, nn
from torch_geometric.nn import GINEConv

from graphbench.modules.activations import make_activation
from graphbench.modules.layers.contract import Layer
from graphbench.modules.propagation import EdgePlan, weighted_sum_at_dst


class GINELayer(Layer):
    r""":math:`x_i' = \mathrm{MLP}\big((1+\epsilon) x_i + \sum_{j \in N(i)} \mathrm{ReLU}(x_j + e_{ji})\big)`
    with a 2-layer MLP and :math:`\epsilon` learned (``train_eps=True``) or fixed at 0.

    The MLP is Linear -> ``mlp_activation`` -> Linear (default: ReLU, Hu et al.); with
    ``mlp_dropout > 0`` it is Linear -> activation -> Dropout -> Linear -> Dropout, the inner MLP of
    ``GINEConvLayer`` in toenshoff/LRGB (``graphgps/layer/gine_conv_layer.py``, the LRGB-tuned GINE,
    which sets ``train_eps=False``).

    The parameters are those of PyG's :class:`~torch_geometric.nn.GINEConv`. With ``sparse=True``
    the gather and the sum over neighbours go through the batch's
    :class:`~graphbench.modules.propagation.EdgePlan` and build the messages in one buffer, in
    place; ``sparse=False`` calls ``GINEConv`` itself. Both agree up to float rounding.

    With ``edge_weight`` (``[E]``, :math:`w_{ji}` on the edge :math:`j \to i`; GraphSAINT's
    :math:`1/\alpha_{j,i}`, with which the sum is the unbiased estimate of the full-graph sum) the sum
    is weighted, :math:`\sum_{j \in N(i)} w_{ji}\, \mathrm{ReLU}(x_j + e_{ji})`; all weights 1 give
    the unweighted layer.
    """

    uses_plan = True
    uses_edge_weight = True

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        edge_dim: int,
        sparse: bool = True,
        train_eps: bool = True,
        mlp_activation: str = "relu",
        mlp_dropout: float = 0.0,
    ) -> None:
        super().__init__()
        act = make_activation(mlp_activation)
        if mlp_dropout > 0:
            mlp = nn.Sequential(
                nn.Linear(in_dim, out_dim), act, nn.Dropout(mlp_dropout), nn.Linear(out_dim, out_dim), nn.Dropout(mlp_dropout)
            )
        else:
            mlp = nn.Sequential(nn.Linear(in_dim, out_dim), act, nn.Linear(out_dim, out_dim))
        self.conv = GINEConv(mlp, train_eps=train_eps, edge_dim=edge_dim if edge_dim != in_dim else None)
        self.sparse = sparse

    def reset_parameters(self) -> None:
        self.conv.reset_parameters()

    def forward(
        self,
        x: Tensor,
        edge_index: Tensor,
        edge_attr: Tensor | None,
        plan: EdgePlan | None = None,
        edge_weight: Tensor | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        if edge_attr is None:
            raise ValueError("gine needs edge features; the network gives every graph at least a constant one")
        if not self.sparse and edge_weight is None:
            return self.conv(x, edge_index, edge_attr), edge_attr
        edge = edge_attr if self.conv.lin is None else self.conv.lin(edge_attr)
        if not self.sparse:
            assert edge_weight is not None
            messages = (x.index_select(0, edge_index[0]) + edge).relu()
            aggregated = weighted_sum_at_dst(messages, edge_weight, edge_index[1], x.size(0))
        else:
            plan = self.plan_for(plan, edge_index, x.size(0))
            # one [E, F] buffer: the gather's output is summed and rectified in place (neither the
            # gather's backward nor the sum's reads it); PyG's message allocates three
            messages = plan.gather_src(x).add_(edge).relu_()
            if edge_weight is not None:
                messages = messages * edge_weight.to(x.dtype).unsqueeze(-1)
            aggregated = plan.scatter_dst(messages)
        return self.conv.nn(aggregated + (1 + self.conv.eps) * x), edge_attr
