"""Normalization of node features inside the network, chosen by the ``normalization`` group."""

from __future__ import annotations

import torch
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


class MaskedBatchNorm1d(nn.BatchNorm1d):
    r""":class:`~torch.nn.BatchNorm1d` over the rows of ``x`` [N, C] that ``mask`` [N] keeps (a padded
    batch's real nodes or edges: :mod:`graphbench.data.store.padding`); without a mask, BatchNorm1d itself.

    In training, with :math:`R` the kept rows and :math:`n = |R|`, every row is normalized by the kept
    rows' statistics, :math:`y_i = \gamma (x_i - \mu) / \sqrt{\sigma^2 + \epsilon} + \beta` with
    :math:`\mu = \frac1n \sum_{r \in R} x_r` and :math:`\sigma^2 = \frac1n \sum_{r \in R} (x_r - \mu)^2`,
    and the running statistics move as BatchNorm1d's do, :math:`\hat\mu \leftarrow (1 - m)\hat\mu + m\mu`
    and :math:`\hat\sigma^2 \leftarrow (1 - m)\hat\sigma^2 + m \frac{n}{n-1}\sigma^2` (momentum :math:`m`,
    or :math:`1/t` at the :math:`t`-th batch when ``momentum=None``). So the kept rows' outputs and the
    running statistics equal those of BatchNorm1d on the kept rows alone. In evaluation the running
    statistics normalize each row on its own, as BatchNorm1d's do. The state dict is BatchNorm1d's.
    """

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        if mask is None or not (self.training or not self.track_running_stats):
            return super().forward(x)
        rows = x.float()
        weight = mask.to(rows.dtype).unsqueeze(-1)
        count = weight.sum()
        mean = (rows * weight).sum(dim=0) / count
        var = ((rows - mean).square() * weight).sum(dim=0) / count
        if self.track_running_stats:
            with torch.no_grad():
                self.num_batches_tracked.add_(1)
                momentum = self.momentum if self.momentum is not None else 1.0 / self.num_batches_tracked
                self.running_mean.lerp_(mean.to(self.running_mean.dtype), momentum)
                unbiased = var * count / (count - 1).clamp(min=1)
                self.running_var.lerp_(unbiased.to(self.running_var.dtype), momentum)
        out = (rows - mean) * torch.rsqrt(var + self.eps)
        if self.affine:
            out = out * self.weight + self.bias
        return out.to(x.dtype)


class NodeNorm(nn.Module):
    r"""``batchnorm`` (over all nodes of the mini-batch), ``layernorm`` (per node), ``graphnorm`` or ``none``.

    ``graphnorm`` is the graph-size normalization of Benchmarking GNNs (Dwivedi et al., 2020) placed
    before BatchNorm: :math:`h_i \leftarrow \mathrm{BN}\big(h_i / \sqrt{|V_G|}\big)`, which needs the
    ``batch`` vector (see :func:`graph_size_norm`). It is not the learnable GraphNorm of Cai et al.
    (2021), which is PyG's :class:`~torch_geometric.nn.norm.GraphNorm`.

    The BatchNorm is a :class:`MaskedBatchNorm1d`: a padded batch's ``mask`` (its real rows) leaves the
    dummy rows out of the batch statistics.
    """

    def __init__(self, dim: int, kind: str) -> None:
        super().__init__()
        if kind not in NORMS:
            raise ValueError(f"unknown normalization {kind!r}; valid: {list(NORMS)}")
        self.kind = kind
        if kind in ("batchnorm", "graphnorm"):
            self.norm: nn.Module = MaskedBatchNorm1d(dim)
        elif kind == "layernorm":
            self.norm = nn.LayerNorm(dim)
        else:
            self.norm = nn.Identity()

    def reset_parameters(self) -> None:
        if hasattr(self.norm, "reset_parameters"):
            self.norm.reset_parameters()

    def forward(self, x: Tensor, batch: Tensor | None = None, mask: Tensor | None = None) -> Tensor:
        if self.kind == "graphnorm":
            x = graph_size_norm(x, batch)
        if mask is not None and isinstance(self.norm, MaskedBatchNorm1d):
            return self.norm(x, mask)
        return self.norm(x)
