"""MixHop on a tiny graph: exact parameter count, and the block of power 0 is a linear map."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from graphbench.modules.layers import MixHopLayer
from graphbench.modules.network import count_parameters
from tests.modules._graphs import set_identity

# a path 0-1-2-3 and a lone edge 3-4, both directions
EDGE_INDEX = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 4], [1, 0, 2, 1, 3, 2, 4, 3]])


def features(dim: int) -> torch.Tensor:
    return torch.linspace(-1.0, 1.0, 5 * dim).view(5, dim)


def test_mixhop_parameters_and_power_zero_block_is_a_linear_map() -> None:
    torch.manual_seed(0)
    layer = MixHopLayer(4, 6, 0, powers=[0, 1, 2])
    assert count_parameters(layer) == 3 * (4 * 2) + 6  # one 4 -> 2 weight per power, one bias
    x = features(4)
    out, _ = layer(x, EDGE_INDEX, None)
    assert out.shape == (5, 6)
    lin0: nn.Linear = layer.conv.lins[0]
    assert torch.allclose(out[:, :2], x @ lin0.weight.T + layer.conv.bias[:2], atol=1e-6)
    with pytest.raises(ValueError, match="multiple of the number of powers"):
        MixHopLayer(4, 7, 0)


#: one edge 0 - 1, both directions
PAIR = torch.tensor([[0, 1], [1, 0]])
PAIR_X = torch.tensor([[2.0, 0.0], [4.0, 6.0]])


def identity_mixhop() -> MixHopLayer:
    layer = MixHopLayer(2, 4, 0, powers=[0, 1])
    for lin in layer.conv.lins:
        set_identity(lin)
    with torch.no_grad():
        layer.conv.bias.zero_()
    return layer


def test_powers_concatenate_exactly() -> None:
    # [x | P x], P the normalized adjacency with self-loops: all 1/2
    out, edge_attr = identity_mixhop()(PAIR_X, PAIR, None)
    torch.testing.assert_close(out, torch.tensor([[2.0, 0.0, 3.0, 3.0], [4.0, 6.0, 3.0, 3.0]]))  # 1/sqrt(2)^2 rounds
    assert edge_attr is None


def test_edge_weight_weighs_the_normalized_adjacency() -> None:
    # weights 3: degrees 4, P = [[1/4, 3/4], [3/4, 1/4]]
    out, _ = identity_mixhop()(PAIR_X, PAIR, None, edge_weight=torch.tensor([3.0, 3.0]))
    assert torch.equal(out, torch.tensor([[2.0, 0.0, 3.5, 4.5], [4.0, 6.0, 2.5, 1.5]]))
