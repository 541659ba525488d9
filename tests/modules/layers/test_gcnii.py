"""GCNII on a tiny graph: exact parameter count, and the identity mapping with a full initial residual."""

from __future__ import annotations

import math

import pytest
import torch

from graphbench.modules.layers import GCNIILayer
from graphbench.modules.network import count_parameters

# a path 0-1-2-3 and a lone edge 3-4, both directions
EDGE_INDEX = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 4], [1, 0, 2, 1, 3, 2, 4, 3]])


def features(dim: int) -> torch.Tensor:
    return torch.linspace(-1.0, 1.0, 5 * dim).view(5, dim)


def test_gcnii_parameters_and_identity_mapping_with_full_initial_residual() -> None:
    torch.manual_seed(0)
    layer = GCNIILayer(8, 8, 0, num_convs=3, alpha=1.0, theta=0.0).eval()
    assert count_parameters(layer) == 3 * 8 * 8  # one shared weight per convolution, no bias
    x = features(8)
    out, _ = layer(x, EDGE_INDEX, None)
    # alpha = 1 keeps only H0 = relu(x), theta = 0 makes every beta 0 (identity mapping)
    assert torch.allclose(out, torch.relu(x))
    assert GCNIILayer.self_contained
    with pytest.raises(ValueError, match="in_dim"):
        GCNIILayer(8, 4, 0)


#: one edge 0 - 1, both directions: with self-loops the normalized adjacency P is all 1/2
PAIR = torch.tensor([[0, 1], [1, 0]])


@pytest.mark.parametrize(
    ("alpha", "expected"),
    [(0.0, [[2.0, 3.0], [2.0, 3.0]]), (0.5, [[1.0, 1.5], [3.0, 4.5]])],
)
def test_one_convolution_by_hand(alpha: float, expected: list[list[float]]) -> None:
    # H0 = relu(x) = [[0, 0], [4, 6]]; theta = 0: identity mapping, H1 = relu((1 - alpha) P H0 + alpha H0)
    layer = GCNIILayer(2, 2, 0, num_convs=1, alpha=alpha, theta=0.0, dropout=0.5).eval()
    out, edge_attr = layer(torch.tensor([[-2.0, 0.0], [4.0, 6.0]]), PAIR, None)
    torch.testing.assert_close(out, torch.tensor(expected))  # 1/sqrt(2)^2 rounds
    assert edge_attr is None


def test_the_convolutions_share_one_weight_each_and_read_growing_depths() -> None:
    layer = GCNIILayer(4, 4, 0, num_convs=3)
    assert [conv.beta for conv in layer.convs] == pytest.approx([math.log(0.5 / depth + 1) for depth in (1, 2, 3)])
    with pytest.raises(ValueError, match=r"^num_convs=0 must be >= 1$"):
        GCNIILayer(4, 4, 0, num_convs=0)
