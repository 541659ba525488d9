"""GATv2: zero attention vectors give uniform attention over N(i) and i itself;
heads concatenate to ``out_dim``; ``share_weights`` uses one matrix for source and target."""

from __future__ import annotations

import pytest
import torch

from graphbench.modules.layers import GATv2Layer
from tests.modules._graphs import PATH_EDGES, PATH_X, set_identity

#: mean over N(i) and i itself (GATv2 adds self-loops) of PATH_X
CLOSED_MEAN = torch.tensor([[11 / 2, 1 / 2], [111 / 3, 3 / 3], [1110 / 3, 6 / 3], [1100 / 2, 5 / 2]])


def uniform_gatv2() -> GATv2Layer:
    layer = GATv2Layer(2, 2, 2, heads=2)
    set_identity(layer.conv.lin_l)
    with torch.no_grad():
        layer.conv.att.zero_()
        layer.conv.bias.zero_()
    return layer


def test_zero_attention_is_closed_neighbourhood_mean() -> None:
    e = torch.randn(PATH_EDGES.size(1), 2)
    out, e_out = uniform_gatv2()(PATH_X, PATH_EDGES, e)
    assert torch.allclose(out, CLOSED_MEAN)
    assert e_out is e


def test_heads_concatenate_to_out_dim() -> None:
    layer = GATv2Layer(12, 12, 5, heads=4)
    out, _ = layer(torch.randn(4, 12), PATH_EDGES, torch.randn(PATH_EDGES.size(1), 5))
    assert out.shape == (4, 12)
    assert layer.conv.heads == 4 and layer.conv.out_channels == 3


def test_shared_weights_use_one_matrix_for_source_and_target() -> None:
    shared = GATv2Layer(4, 4, 4, heads=2, share_weights=True).conv
    assert shared.lin_l is shared.lin_r
    separate = GATv2Layer(4, 4, 4, heads=2).conv
    assert separate.lin_l is not separate.lin_r


def test_width_not_divisible_by_heads_names_the_fix() -> None:
    with pytest.raises(ValueError, match=r"^heads=4 must divide out_dim=10 \(gatv2's width, concatenated heads\)"):
        GATv2Layer(10, 10, 10, heads=4)
