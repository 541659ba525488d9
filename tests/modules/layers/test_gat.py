"""GAT: zero attention vectors give uniform attention over N(i) and i itself; edge features steer it."""

from __future__ import annotations

import pytest
import torch

from graphbench.modules.layers import GATLayer
from tests.modules._graphs import PATH_EDGES, PATH_X, set_identity

#: mean over N(i) and i itself (GAT adds self-loops) of PATH_X (also tests/modules/layers/test_gatv2.py)
CLOSED_MEAN = torch.tensor([[11 / 2, 1 / 2], [111 / 3, 3 / 3], [1110 / 3, 6 / 3], [1100 / 2, 5 / 2]])


def uniform_gat() -> GATLayer:
    layer = GATLayer(2, 2, 2, heads=2)
    set_identity(layer.conv.lin)
    with torch.no_grad():
        for p in (layer.conv.att_src, layer.conv.att_dst, layer.conv.att_edge, layer.conv.bias):
            p.zero_()
    return layer


def test_zero_attention_is_closed_neighbourhood_mean() -> None:
    e = torch.randn(PATH_EDGES.size(1), 2)
    out, e_out = uniform_gat()(PATH_X, PATH_EDGES, e)
    assert torch.allclose(out, CLOSED_MEAN)
    assert e_out is e


def test_edge_features_steer_gat_attention() -> None:
    layer = uniform_gat()
    set_identity(layer.conv.lin_edge)
    with torch.no_grad():
        layer.conv.att_edge.fill_(1.0)
    e = torch.zeros(PATH_EDGES.size(1), 2)
    e[0] = 100.0  # edge 0 -> 1 dominates node 1's attention (self-loops get the mean edge feature)
    out, _ = layer(PATH_X, PATH_EDGES, e)
    assert torch.allclose(out[1], PATH_X[0], atol=1e-4)
    assert torch.allclose(out[0], CLOSED_MEAN[0])


def test_heads_concatenate_to_out_dim() -> None:
    layer = GATLayer(12, 12, 5, heads=4)
    out, _ = layer(torch.randn(4, 12), PATH_EDGES, torch.randn(PATH_EDGES.size(1), 5))
    assert out.shape == (4, 12)
    assert layer.conv.heads == 4 and layer.conv.out_channels == 3


def test_width_not_divisible_by_heads_names_the_fix() -> None:
    with pytest.raises(ValueError, match=r"^heads=4 must divide out_dim=10 \(gat's width, concatenated heads\)"):
        GATLayer(10, 10, 10, heads=4)
