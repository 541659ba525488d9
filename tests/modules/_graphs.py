"""Tiny hand-built graphs and helpers shared by the layer tests."""

from __future__ import annotations

import torch
from torch import Tensor, nn

#: directed edges j -> i of the undirected path 0 - 1 - 2 plus the edge 2 - 3 (4 nodes)
PATH_EDGES = torch.tensor([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]])
#: node features: node i has the value 10^i in channel 0 and i in channel 1
PATH_X = torch.tensor([[1.0, 0.0], [10.0, 1.0], [100.0, 2.0], [1000.0, 3.0]])


def set_identity(lin: nn.Linear, scale: float = 1.0) -> None:
    """``lin(x) = scale * x`` (square weight, zero bias if any)."""
    with torch.no_grad():
        lin.weight.zero_()
        lin.weight.fill_diagonal_(scale)
        if lin.bias is not None:
            lin.bias.zero_()


def neighbour_sum(x: Tensor, edge_index: Tensor) -> Tensor:
    return torch.zeros_like(x).index_add_(0, edge_index[1], x[edge_index[0]])
