"""Normalization of node features inside the network, chosen by the ``normalization`` group."""

from __future__ import annotations

from torch import Tensor, nn
from torch_geometric.utils import degree

NORMS: tuple[str, ...] = ("batchnorm", "layernorm", "graphnorm", "none")


def graph_size_norm(x: Tensor, batch: Tensor | None) -> Tensor:
    r"""Graph-size normalization of Benchmarking GNNs (Dwivedi et al., 2020):
    :math:`h_i \leftarrow h_i / \sqrt{|V_G|}` for every row :math:`i` of graph :math:`G`.

    ``batch[i]`` is the graph of row ``i`` (``None``: all rows form one graph). Applied to edge rows
    with the edges' graph vector it divides by :math:`\sqrt{|E_G|}`, as their ``snorm_e`` does.
    """
    if batch is None:
        return x / (x.size(0) ** 0.5) if x.size(0) > 0 else x
    counts = degree(batch, num_nodes=int(batch.max()) + 1 if batch.numel() else 0, dtype=x.dtype)
    return x * counts.clamp(min=1).rsqrt()[batch].unsqueeze(-1)


class NodeNorm(nn.Module):
    r"""``batchnorm`` (over all nodes of the mini-batch), ``layernorm`` (per node), ``graphnorm`` or ``none``.

    ``graphnorm`` is the graph-size normalization of Benchmarking GNNs (Dwivedi et al., 2020) placed
    before BatchNorm: :math:`h_i \leftarrow \mathrm{BN}\big(h_i / \sqrt{|V_G|}\big)`, which needs the
    ``batch`` vector (see :func:`graph_size_norm`). It is not the learnable GraphNorm of Cai et al.
    (2021), which is PyG's :class:`~torch_geometric.nn.norm.GraphNorm`.
    """

    def __init__(self, dim: int, kind: str) -> None:
        super().__init__()
        if kind not in NORMS:
            raise ValueError(f"unknown normalization {kind!r}; valid: {list(NORMS)}")
        self.kind = kind
        if kind in ("batchnorm", "graphnorm"):
            self.norm: nn.Module = nn.BatchNorm1d(dim)
        elif kind == "layernorm":
            self.norm = nn.LayerNorm(dim)
        else:
            self.norm = nn.Identity()

    def reset_parameters(self) -> None:
        if hasattr(self.norm, "reset_parameters"):
            self.norm.reset_parameters()

    def forward(self, x: Tensor, batch: Tensor | None = None) -> Tensor:
        if self.kind == "graphnorm":
            x = graph_size_norm(x, batch)
        return self.norm(x)
