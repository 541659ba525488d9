"""The MLP baseline: a linear map of every node's features that ignores the graph."""

from __future__ import annotations

import torch

from graphbench.modules.layers import MLPLayer
from tests.modules._graphs import PATH_EDGES, PATH_X


def test_each_node_is_mapped_alone_whatever_the_edges() -> None:
    layer = MLPLayer(2, 3, 2)
    with torch.no_grad():
        layer.lin.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]))
        layer.lin.bias.copy_(torch.tensor([0.0, 0.0, -1.0]))
    e = torch.randn(PATH_EDGES.size(1), 2)
    out, e_out = layer(PATH_X, PATH_EDGES, e)
    expected = torch.tensor([[1.0, 0.0, 0.0], [10.0, 2.0, 10.0], [100.0, 4.0, 101.0], [1000.0, 6.0, 1002.0]])
    assert torch.equal(out, expected) and e_out is e
    no_edges, _ = layer(PATH_X, torch.empty(2, 0, dtype=torch.long), None)
    assert torch.equal(no_edges, expected)


def test_reset_parameters_redraws_the_weights() -> None:
    layer = MLPLayer(4, 4, 4)
    with torch.no_grad():
        layer.lin.weight.zero_()
    layer.reset_parameters()
    assert bool(layer.lin.weight.abs().sum() > 0)
