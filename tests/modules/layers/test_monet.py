"""MoNet: exact degree pseudo-coordinates and exact Gaussian kernel weights on a path."""

from __future__ import annotations

import math

import torch

from graphbench.modules.layers import MoNetLayer
from graphbench.modules.layers.monet import degree_pseudo_coordinates
from tests.modules._graphs import PATH_EDGES, PATH_X, neighbour_sum


def test_degree_pseudo_coordinates_exact() -> None:
    # in-degrees 1, 2, 2, 1 -> 1/sqrt(deg + 1) = 1/sqrt2, 1/sqrt3, 1/sqrt3, 1/sqrt2
    a, b = 1 / math.sqrt(2), 1 / math.sqrt(3)
    expected = torch.tensor([[a, b], [b, a], [b, b], [b, b], [b, a], [a, b]])
    assert torch.allclose(degree_pseudo_coordinates(PATH_EDGES, 4), expected)


def kernel_layer(mu: float) -> MoNetLayer:
    """One active kernel (Theta_0 = I, the others 0) over pseudo-coordinates squashed to tanh(0) = 0."""
    layer = MoNetLayer(2, 2, 2, kernel_size=3, pseudo_dim=2)
    with torch.no_grad():
        layer.pseudo[0].weight.zero_()
        layer.pseudo[0].bias.zero_()
        layer.conv.g.zero_()  # [in, K * out], kernel k uses columns k*out .. (k+1)*out
        layer.conv.g[:, :2] = torch.eye(2)
        layer.conv.mu.fill_(mu)
        layer.conv.sigma.fill_(1.0)
        layer.conv.bias.zero_()
    return layer


def test_gaussian_at_its_mean_sums_neighbours() -> None:
    out, _ = kernel_layer(mu=0.0)(PATH_X, PATH_EDGES, None)
    assert torch.allclose(out, neighbour_sum(PATH_X, PATH_EDGES))


def test_gaussian_weight_off_its_mean() -> None:
    # w = exp(-1/2 * sum_d (0 - 1)^2 / 1) = exp(-1) over pseudo_dim = 2
    out, _ = kernel_layer(mu=1.0)(PATH_X, PATH_EDGES, None)
    assert torch.allclose(out, math.exp(-1.0) * neighbour_sum(PATH_X, PATH_EDGES))


def test_edge_features_pass_through_and_kernels_from_config() -> None:
    layer = MoNetLayer(4, 4, 3, kernel_size=5, pseudo_dim=3, aggr="mean", root_weight=True)
    assert layer.conv.mu.shape == (5, 3) and layer.conv.root is not None
    e = torch.randn(PATH_EDGES.size(1), 3)
    out, e_out = layer(torch.randn(4, 4), PATH_EDGES, e)
    assert out.shape == (4, 4) and e_out is e
