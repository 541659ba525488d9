"""GCNII: graph convolution with initial residual and identity mapping (Chen et al., ICML 2020)."""

from __future__ import annotations

from torch import Tensor, nn
from torch_geometric.nn import GCN2Conv

from graphbench.modules.activations import make_activation
from graphbench.modules.layers.contract import Layer
from graphbench.vocabulary.errors import ArgumentError


class GCNIILayer(Layer):
    r"""A stack of ``num_convs`` GCNII convolutions (PyG's :class:`~torch_geometric.nn.conv.GCN2Conv`)
    that all read the same initial representation :math:`H^{(0)} = \sigma(X)`:

    .. math::
        H^{(\ell+1)} = \sigma\Big(\big((1-\alpha)\hat P H^{(\ell)} + \alpha H^{(0)}\big)
        \big((1-\beta_\ell) I + \beta_\ell W^{(\ell)}\big)\Big),
        \qquad \beta_\ell = \log(\lambda / \ell + 1),

    with :math:`\hat P = \hat D^{-1/2} \hat A \hat D^{-1/2}` and dropout before every convolution
    and on the output. Because every convolution needs :math:`H^{(0)}`, the whole deep stack is one
    self-contained layer: after the input encoder ``Linear(F -> hidden)`` and before a linear head,
    it gives Chen et al.'s network ``Dropout -> Linear -> ReLU -> [Dropout -> GCN2Conv -> ReLU] x L
    -> Dropout -> Linear``. Edge features are not used. ``edge_weight`` (``[E]``, e.g. GraphSAINT's
    :math:`1/\alpha_{u,v}`) weighs :math:`A` inside the normalization of :math:`\hat P`, as in GCN.
    """

    uses_edge_attr = False
    uses_edge_weight = True
    self_contained = True

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        edge_dim: int,
        *,
        num_convs: int = 64,
        alpha: float = 0.1,
        theta: float = 0.5,
        dropout: float = 0.6,
        activation: str = "relu",
    ) -> None:
        super().__init__()
        if in_dim != out_dim:
            raise ValueError(f"GCNIILayer keeps the width: in_dim ({in_dim}) must equal out_dim ({out_dim})")
        if num_convs < 1:
            raise ArgumentError(f"num_convs={num_convs} must be >= 1")
        self.convs = nn.ModuleList(
            GCN2Conv(out_dim, alpha=alpha, theta=theta, layer=depth, shared_weights=True, normalize=True)
            for depth in range(1, num_convs + 1)
        )
        self.act = make_activation(activation)
        self.dropout = nn.Dropout(dropout)

    def reset_parameters(self) -> None:
        for conv in self.convs:
            conv.reset_parameters()

    def forward(
        self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None, edge_weight: Tensor | None = None
    ) -> tuple[Tensor, Tensor | None]:
        h = x0 = self.act(x)
        for conv in self.convs:
            h = self.act(conv(self.dropout(h), x0, edge_index, edge_weight))
        return self.dropout(h), edge_attr
