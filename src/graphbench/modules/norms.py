"""Normalization of node features inside the network, chosen by the ``normalization`` group."""
from __future__ import annotations

from torch import Tensor, nn

NORMS: tuple[str, ...] = ("batchnorm", "layernorm", "none")


class NodeNorm(nn.Module):
    """``batchnorm`` (over all nodes of the mini-batch), ``layernorm`` (per node) or ``none``."""

    def __init__(self, dim: int, kind: str) -> None:
        super().__init__()
        if kind not in NORMS:
            raise ValueError(f"unknown normalization {kind!r}; valid: {list(NORMS)}")
        self.kind = kind
        if kind == "batchnorm":
            self.norm: nn.Module = nn.BatchNorm1d(dim)
        elif kind == "layernorm":
            self.norm = nn.LayerNorm(dim)
        else:
            self.norm = nn.Identity()

    def reset_parameters(self) -> None:
        if hasattr(self.norm, "reset_parameters"):
            self.norm.reset_parameters()

    def forward(self, x: Tensor, batch: Tensor | None = None) -> Tensor:
        return self.norm(x)
