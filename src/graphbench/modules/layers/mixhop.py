"""MixHop: higher-order graph convolution by mixing powers of the adjacency (Abu-El-Haija et al., ICML 2019)."""

from __future__ import annotations

from torch import Tensor
from torch_geometric.nn import MixHopConv

from graphbench.modules.layers.contract import Layer


class MixHopLayer(Layer):
    r""":math:`X' = \big\Vert_{p \in P} \hat A^{p} X W_p` with :math:`\hat A = \hat D^{-1/2} (A + I) \hat D^{-1/2}`
    (PyG's :class:`~torch_geometric.nn.conv.MixHopConv`): one weight matrix per power :math:`p` in
    ``powers``, outputs concatenated, so ``out_dim`` must split evenly into ``len(powers)`` parts
    (the model's ``width_multiple``). Edge features are not used. ``edge_weight`` (``[E]``, e.g.
    GraphSAINT's :math:`1/\alpha_{u,v}`) weighs :math:`A` inside the normalization of :math:`\hat A`,
    as in GCN (``MixHopConv(x, edge_index, edge_weight)``)."""

    uses_edge_attr = False
    uses_edge_weight = True

    def __init__(self, in_dim: int, out_dim: int, edge_dim: int, *, powers: list[int] | tuple[int, ...] = (0, 1, 2)) -> None:
        super().__init__()
        powers = [int(p) for p in powers]
        if not powers or out_dim % len(powers):
            raise ValueError(f"MixHopLayer: out_dim {out_dim} must be a multiple of the number of powers {powers}")
        self.conv = MixHopConv(in_dim, out_dim // len(powers), powers=powers)

    def reset_parameters(self) -> None:
        self.conv.reset_parameters()

    def forward(
        self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None, edge_weight: Tensor | None = None
    ) -> tuple[Tensor, Tensor | None]:
        return self.conv(x, edge_index, edge_weight), edge_attr
