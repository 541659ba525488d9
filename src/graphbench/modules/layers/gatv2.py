"""GATv2 (Brody et al., 2022, "How Attentive are Graph Attention Networks?")."""

from __future__ import annotations

from torch import Tensor
from torch_geometric.nn import GATv2Conv

from graphbench.modules.layers.contract import Layer
from graphbench.modules.layers.gat import head_dim


class GATv2Layer(Layer):
    r"""Multi-head dynamic graph attention with edge features, heads concatenated to ``out_dim``:

    .. math::
        \alpha^k_{ij} = \mathrm{softmax}_{j \in N(i) \cup \{i\}}\Big(a^{k\top} \mathrm{LeakyReLU}\big(
            W_s^k x_j + W_t^k x_i + W_e^k e_{ij}\big)\Big),
        \qquad x_i' = \big\Vert_{k=1}^{K} \sum_{j \in N(i) \cup \{i\}} \alpha^k_{ij} W_s^k x_j + b

    (Brody et al., 2022, eq. 7: the non-linearity comes before the attention vector, which makes the
    ranking of neighbours depend on the query node). Each of the :math:`K` = ``heads`` heads has
    width ``out_dim / heads``. Self-loops are added with the mean of the incoming edge features.
    ``edge_attr`` passes through unchanged; ``edge_index[1]`` is the receiving node ``i``.
    """

    # ignores a batch's edge_weight (GraphSAINT's 1/alpha_uv): attention coefficients replace the edge weights
    uses_edge_weight = False

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        edge_dim: int,
        heads: int = 4,
        negative_slope: float = 0.2,
        attn_dropout: float = 0.0,
        share_weights: bool = False,
    ) -> None:
        super().__init__()
        self.conv = GATv2Conv(
            in_dim,
            head_dim(out_dim, heads, "gatv2"),
            heads=heads,
            concat=True,
            negative_slope=negative_slope,
            dropout=attn_dropout,
            edge_dim=edge_dim,
            share_weights=share_weights,
        )

    def reset_parameters(self) -> None:
        self.conv.reset_parameters()

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None) -> tuple[Tensor, Tensor | None]:
        return self.conv(x, edge_index, edge_attr), edge_attr
