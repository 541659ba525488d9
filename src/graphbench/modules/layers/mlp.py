"""The graph-agnostic baseline layer."""

from __future__ import annotations

from torch import Tensor, nn

from graphbench.modules.layers.contract import Layer


class MLPLayer(Layer):
    r""":math:`x_i' = W x_i + b`, ignoring the graph: with pooling this is a DeepSets-style baseline
    that any model using the edges must beat."""

    # ignores a batch's edge_weight (GraphSAINT's 1/alpha_uv): no aggregation over neighbours
    uses_edge_weight = False
    uses_edge_attr = False

    def __init__(self, in_dim: int, out_dim: int, edge_dim: int) -> None:
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim)

    def reset_parameters(self) -> None:
        self.lin.reset_parameters()

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None) -> tuple[Tensor, Tensor | None]:
        return self.lin(x), edge_attr
