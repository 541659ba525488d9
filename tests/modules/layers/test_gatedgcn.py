"""GatedGCN on a hand-built 3-node path with weights set by hand."""

from __future__ import annotations

import math

import torch
from torch import nn

from graphbench.modules.layers.gatedgcn import GatedGCNLayer


def set_linear(lin: nn.Linear, weight: float, bias: float = 0.0) -> None:
    nn.init.constant_(lin.weight, 0.0)
    with torch.no_grad():
        lin.weight.fill_diagonal_(weight)
        lin.bias.fill_(bias)


def test_exact_values_on_a_path() -> None:
    layer = GatedGCNLayer(1, 1, 1, eps=0.0)
    for lin, w in ((layer.A, 1.0), (layer.B, 2.0), (layer.C, 0.0), (layer.D, 0.0), (layer.E, 0.0)):
        set_linear(lin, w)
    x = torch.tensor([[1.0], [2.0], [3.0]])
    edge_index = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])  # path 0 - 1 - 2
    e = torch.zeros(4, 1)
    h, e_hat = layer(x, edge_index, e)
    # all gates are sigmoid(0) = 1/2, so node i gets A x_i + mean_j(B x_j)
    assert torch.allclose(h.view(-1), torch.tensor([1 + 2 * 2.0, 2 + 2 * 2.0, 3 + 2 * 2.0]))
    assert torch.equal(e_hat, torch.zeros(4, 1))


def test_gates_weight_neighbours() -> None:
    layer = GatedGCNLayer(1, 1, 1, eps=0.0)
    for lin, w in ((layer.A, 0.0), (layer.B, 1.0), (layer.C, 1.0), (layer.D, 0.0), (layer.E, 0.0)):
        set_linear(lin, w)
    x = torch.tensor([[0.0], [10.0], [20.0]])
    edge_index = torch.tensor([[1, 2], [0, 0]])  # 1 -> 0 and 2 -> 0
    e = torch.tensor([[0.0], [math.log(3.0)]])  # gates 1/2 and 3/4
    h, _ = layer(x, edge_index, e)
    assert torch.allclose(h[0], torch.tensor([(0.5 * 10 + 0.75 * 20) / 1.25]))


def test_permutation_equivariance() -> None:
    torch.manual_seed(0)
    layer = GatedGCNLayer(4, 4, 4)
    x, e = torch.randn(5, 4), torch.randn(6, 4)
    edge_index = torch.tensor([[0, 1, 2, 3, 4, 0], [1, 2, 3, 4, 0, 2]])
    perm = torch.tensor([3, 0, 4, 1, 2])
    inverse = torch.argsort(perm)
    h, _ = layer(x, edge_index, e)
    h_perm, _ = layer(x[perm], inverse[edge_index], e)
    assert torch.allclose(h_perm, h[perm], atol=1e-6)
