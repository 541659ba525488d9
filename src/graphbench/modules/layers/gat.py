"""Graph attention network (Veličković et al., 2018, "Graph Attention Networks")."""

from __future__ import annotations

from torch import Tensor
from torch_geometric.nn import GATConv

from graphbench.modules.layers.contract import Layer
from graphbench.vocabulary.errors import ArgumentError


def head_dim(out_dim: int, heads: int, model: str) -> int:
    """Width of one attention head when ``heads`` heads are concatenated to ``out_dim``."""
    if heads < 1 or out_dim % heads != 0:
        raise ArgumentError(
            f"heads={heads} must divide out_dim={out_dim} ({model}'s width, concatenated heads): "
            f"the width must be a positive multiple of {heads}"
        )
    return out_dim // heads


class GATLayer(Layer):
    r"""Multi-head graph attention with edge features, heads concatenated to ``out_dim``:

    .. math::
        \alpha^k_{ij} = \mathrm{softmax}_{j \in N(i) \cup \{i\}}\Big(\mathrm{LeakyReLU}\big(
            a_s^{k\top} W^k x_j + a_t^{k\top} W^k x_i + a_e^{k\top} W_e^k e_{ij}\big)\Big),
        \qquad x_i' = \big\Vert_{k=1}^{K} \sum_{j \in N(i) \cup \{i\}} \alpha^k_{ij} W^k x_j + b

    (Veličković et al., 2018, eq. 3-5; the edge term is PyG's ``edge_dim`` extension). Each of the
    :math:`K` = ``heads`` heads has width ``out_dim / heads``, so ``out_dim`` must be a multiple of
    ``heads``. Self-loops are added with the mean of the incoming edge features. ``edge_attr``
    passes through unchanged; ``edge_index[1]`` is the receiving node ``i``.
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
    ) -> None:
        super().__init__()
        self.conv = GATConv(
            in_dim,
            head_dim(out_dim, heads, "gat"),
            heads=heads,
            concat=True,
            negative_slope=negative_slope,
            dropout=attn_dropout,
            edge_dim=edge_dim,
        )

    def reset_parameters(self) -> None:
        self.conv.reset_parameters()

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None) -> tuple[Tensor, Tensor | None]:
        return self.conv(x, edge_index, edge_attr), edge_attr
