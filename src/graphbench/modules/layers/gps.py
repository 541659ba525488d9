"""GraphGPS layer (Rampášek et al., 2022, "Recipe for a General, Powerful, Scalable Graph Transformer")."""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch_geometric.utils import to_dense_batch

from graphbench.modules.activations import make_activation
from graphbench.modules.layers.contract import Layer
from graphbench.modules.layers.gatedgcn import GatedGCNLayer
from graphbench.modules.layers.gine import GINELayer
from graphbench.modules.norms import NodeNorm
from graphbench.vocabulary.errors import ArgumentError

LOCAL_MODELS: tuple[str, ...] = ("gine", "gatedgcn")


class GPSLayer(Layer):
    r"""One GPS layer: a local message-passing layer and global multi-head self-attention over the
    nodes of each graph, run in parallel on the same input, summed, then a feed-forward block
    (Rampášek et al., 2022, eq. 7-9):

    .. math::
        X_M &= \mathrm{Norm}\big(X + \mathrm{Dropout}(\mathrm{MPNN}(X, E, A))\big), \qquad
        X_T = \mathrm{Norm}\big(X + \mathrm{Dropout}(\mathrm{MHA}(X))\big),

        X' &= \mathrm{Norm}\big(Y + \mathrm{FFN}(Y)\big), \quad Y = X_M + X_T, \quad
        \mathrm{FFN}(Y) = \mathrm{Dropout}\big(W_2\, \mathrm{Dropout}(\sigma(W_1 Y))\big),

    with :math:`W_1 \in \mathbb{R}^{2d \times d}`, :math:`W_2 \in \mathbb{R}^{d \times 2d}`.
    :math:`\mathrm{MHA}` attends over all nodes of the same graph (``batch``), with ``heads`` heads of
    width ``d / heads`` and attention dropout ``attn_dropout``. The local MPNN is GINE (default) or
    GatedGCN; GatedGCN updates the edge features, with its own norm, activation, dropout and
    residual on nodes and edges as in GraphGPS's code.

    The layer applies its own normalizations (``norm``, one of
    :data:`~graphbench.modules.norms.NORMS`), residual connections and dropout, so it declares
    ``self_contained = True`` and the network adds nothing around it; it declares
    ``needs_batch = True`` to receive the graph index of every node.
    """

    needs_batch = True
    # ignores a batch's edge_weight (GraphSAINT's 1/alpha_uv): the local MPNN and global attention define their own coefficients
    uses_edge_weight = False
    self_contained = True

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        edge_dim: int,
        heads: int = 4,
        local: str = "gine",
        dropout: float = 0.0,
        attn_dropout: float = 0.0,
        norm: str = "batchnorm",
        activation: str = "relu",
    ) -> None:
        super().__init__()
        if in_dim != out_dim:
            raise ValueError(f"gps: the residual connections need in_dim == out_dim, got {in_dim} != {out_dim}")
        if local not in LOCAL_MODELS:
            raise ArgumentError(f"local={local!r} is not one of {list(LOCAL_MODELS)}")
        if heads < 1 or out_dim % heads != 0:
            raise ArgumentError(
                f"heads={heads} must divide out_dim={out_dim} (gps's width, concatenated heads): "
                f"the width must be a positive multiple of {heads}"
            )
        dim = out_dim
        self.local = local
        self.updates_edges = local == "gatedgcn"
        self.local_model: nn.Module = GINELayer(dim, dim, edge_dim) if local == "gine" else GatedGCNLayer(dim, dim, edge_dim)
        if self.updates_edges:
            self.local_norm_h = NodeNorm(dim, norm)
            self.local_norm_e = NodeNorm(edge_dim, norm)
        self.norm_local = NodeNorm(dim, norm)
        self.attn = nn.MultiheadAttention(dim, heads, dropout=attn_dropout, batch_first=True)
        self.norm_attn = NodeNorm(dim, norm)
        self.ff_in = nn.Linear(dim, 2 * dim)
        self.ff_out = nn.Linear(2 * dim, dim)
        self.norm_ff = NodeNorm(dim, norm)
        self.act = make_activation(activation)
        self.dropout = nn.Dropout(dropout)

    def reset_parameters(self) -> None:
        for module in self.children():
            if hasattr(module, "reset_parameters"):
                module.reset_parameters()
        self.attn._reset_parameters()

    def _local(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor, batch: Tensor) -> tuple[Tensor, Tensor]:
        if not self.updates_edges:
            h, _ = self.local_model(x, edge_index, edge_attr)
            return x + self.dropout(h), edge_attr
        h, e = self.local_model(x, edge_index, edge_attr)
        h = x + self.dropout(self.act(self.local_norm_h(h, batch)))
        e = edge_attr + self.dropout(self.act(self.local_norm_e(e, batch[edge_index[0]])))
        return h, e

    def forward(
        self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None, batch: Tensor | None = None
    ) -> tuple[Tensor, Tensor | None]:
        if edge_attr is None:
            raise ValueError("gps needs edge features; the network gives every graph at least a constant one")
        if batch is None:
            batch = torch.zeros(x.size(0), dtype=torch.long, device=x.device)
        h_local, edge_attr = self._local(x, edge_index, edge_attr, batch)
        h_local = self.norm_local(h_local, batch)
        dense, mask = to_dense_batch(x, batch)
        attn = self.attn(dense, dense, dense, key_padding_mask=~mask, need_weights=False)[0][mask]
        h_attn = self.norm_attn(x + self.dropout(attn), batch)
        h = h_local + h_attn
        ff = self.dropout(self.ff_out(self.dropout(self.act(self.ff_in(h)))))
        return self.norm_ff(h + ff, batch), edge_attr
