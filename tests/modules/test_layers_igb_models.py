"""The layers of IGB's model set beside GCN, GAT and SAGE: APPNP, GCNII and MixHop on a tiny graph,
with exact outputs where a setting reduces them to a known map, and exact parameter counts."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from graphbench.modules.layers import APPNPLayer, GCNIILayer, MixHopLayer
from graphbench.modules.network import count_parameters

# a path 0-1-2-3 and a lone edge 3-4, both directions
EDGE_INDEX = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 4], [1, 0, 2, 1, 3, 2, 4, 3]])


def features(dim: int) -> torch.Tensor:
    return torch.linspace(-1.0, 1.0, 5 * dim).view(5, dim)


def test_appnp_parameters_and_teleport_one_returns_the_prediction() -> None:
    torch.manual_seed(0)
    layer = APPNPLayer(4, 3, 0, K=10, alpha=1.0, dropout=0.5, edge_dropout=0.5).eval()
    assert count_parameters(layer) == 4 * 3 + 3
    x = features(4)
    out, edge_attr = layer(x, EDGE_INDEX, None)
    # alpha = 1 teleports every step back to H: the output is the MLP's prediction itself
    assert edge_attr is None and torch.allclose(out, layer.linear(torch.relu(x)))
    propagated, _ = APPNPLayer(4, 3, 0, alpha=0.1).eval()(x, EDGE_INDEX, None)
    assert propagated.shape == (5, 3)


def test_gcnii_parameters_and_identity_mapping_with_full_initial_residual() -> None:
    torch.manual_seed(0)
    layer = GCNIILayer(8, 8, 0, num_convs=3, alpha=1.0, theta=0.0).eval()
    assert count_parameters(layer) == 3 * 8 * 8  # one shared weight per convolution, no bias
    x = features(8)
    out, _ = layer(x, EDGE_INDEX, None)
    # alpha = 1 keeps only H0 = relu(x), theta = 0 makes every beta 0 (identity mapping)
    assert torch.allclose(out, torch.relu(x))
    assert getattr(GCNIILayer, "self_contained", False)
    with pytest.raises(ValueError, match="in_dim"):
        GCNIILayer(8, 4, 0)


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
