"""Prediction heads: pooled graph (or node) embeddings -> task outputs."""

from __future__ import annotations

from torch import Tensor, nn

from graphbench.modules.activations import make_activation


class MLPHead(nn.Module):
    r"""An MLP of ``num_layers`` linear layers: ``num_layers - 1`` hidden layers of width ``in_dim``
    (each Linear -> activation -> dropout), then a linear output layer.

    ``num_layers=1`` is a linear head. Tönshoff et al. (2023, "Where Did the Gap Go?") found that
    head depth explains much of the gap between MPNNs and graph transformers on Peptides-func.
    """

    def __init__(self, in_dim: int, out_dim: int, num_layers: int, activation: str = "relu", dropout: float = 0.0) -> None:
        super().__init__()
        if num_layers < 1:
            raise ValueError(f"head.num_layers must be >= 1, got {num_layers}")
        layers: list[nn.Module] = []
        for _ in range(num_layers - 1):
            layers += [nn.Linear(in_dim, in_dim), make_activation(activation), nn.Dropout(dropout)]
        layers.append(nn.Linear(in_dim, out_dim))
        self.mlp = nn.Sequential(*layers)

    def reset_parameters(self) -> None:
        for module in self.mlp:
            if isinstance(module, nn.Linear):
                module.reset_parameters()

    def forward(self, x: Tensor) -> Tensor:
        return self.mlp(x)
