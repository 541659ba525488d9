"""MoNet: Gaussian mixture model convolution (Monti et al., 2017, "Geometric Deep Learning on Graphs
and Manifolds using Mixture Model CNNs"), with the degree pseudo-coordinates of Benchmarking GNNs."""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch_geometric.nn import GMMConv
from torch_geometric.utils import degree

from graphbench.modules.layers.contract import Layer


def degree_pseudo_coordinates(edge_index: Tensor, num_nodes: int) -> Tensor:
    r"""Pseudo-coordinates :math:`u(j, i) = \big(1/\sqrt{\deg j + 1},\ 1/\sqrt{\deg i + 1}\big)` of every
    edge :math:`j \to i` (``edge_index[0]``, ``edge_index[1]``), :math:`\deg` the in-degree. The
    :math:`+1` (a self-loop) avoids dividing by zero, as in Dwivedi et al. (2020)'s MoNet."""
    src, dst = edge_index
    inv_sqrt = (degree(dst, num_nodes=num_nodes) + 1.0).rsqrt()
    return torch.stack([inv_sqrt[src], inv_sqrt[dst]], dim=-1)


class MoNetLayer(Layer):
    r"""Gaussian mixture model convolution over learned degree pseudo-coordinates:

    .. math::
        \tilde u_{ij} = \tanh\big(W_u\, u(j, i) + b_u\big) \in \mathbb{R}^{D}, \qquad
        w_k(\tilde u) = \exp\Big(-\tfrac12 \sum_{d=1}^{D} \frac{(\tilde u_d - \mu_{k,d})^2}{\sigma_{k,d}^2}\Big),

        x_i' = \mathop{\square}_{j \in N(i)} \sum_{k=1}^{K} w_k(\tilde u_{ij})\, \Theta_k x_j
               \;[+\, W_r x_i] + b

    (Monti et al., 2017, eq. 9-11: :math:`K` = ``kernel_size`` Gaussian kernels with learned means
    and diagonal covariances over :math:`D` = ``pseudo_dim`` pseudo-coordinates; :math:`\square` is
    the ``aggr`` aggregation). The pseudo-coordinates :math:`u` are those of
    :func:`degree_pseudo_coordinates`, passed through the learned ``Linear(2, D) + tanh`` of
    Benchmarking GNNs (Dwivedi et al., 2020; ``kernel_size=3``, ``pseudo_dim=2``, ``aggr="sum"``,
    no root weight there). MoNet's kernels weigh edges by geometry only, so bond or other edge
    features are not used: ``edge_attr`` passes through unchanged.
    """

    # ignores a batch's edge_weight (GraphSAINT's 1/alpha_uv): the Gaussian kernels on pseudo-coordinates replace the edge weights
    uses_edge_weight = False
    uses_edge_attr = False

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        edge_dim: int,
        kernel_size: int = 3,
        pseudo_dim: int = 2,
        aggr: str = "sum",
        root_weight: bool = False,
        separate_gaussians: bool = False,
    ) -> None:
        super().__init__()
        self.pseudo = nn.Sequential(nn.Linear(2, pseudo_dim), nn.Tanh())
        self.conv = GMMConv(
            in_dim,
            out_dim,
            dim=pseudo_dim,
            kernel_size=kernel_size,
            separate_gaussians=separate_gaussians,
            aggr=aggr,
            root_weight=root_weight,
        )
        if not root_weight:  # PyG 2.8's GMMConv.forward reads self.root, which it only sets with root_weight
            self.conv.root = None

    def reset_parameters(self) -> None:
        self.pseudo[0].reset_parameters()
        self.conv.reset_parameters()

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None) -> tuple[Tensor, Tensor | None]:
        pseudo = self.pseudo(degree_pseudo_coordinates(edge_index, x.size(0)).to(x.dtype))
        return self.conv(x, edge_index, pseudo), edge_attr
