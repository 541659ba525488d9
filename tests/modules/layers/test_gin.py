"""GIN on a hand-built path: with an identity MLP it is exactly (1 + eps) x_i + sum_j x_j."""

from __future__ import annotations

import torch

from graphbench.modules.layers import GINLayer
from tests.modules._graphs import PATH_EDGES, PATH_X, neighbour_sum, set_identity


def identity_gin(dim: int) -> GINLayer:
    layer = GINLayer(dim, dim, dim)
    set_identity(layer.conv.nn[0])
    set_identity(layer.conv.nn[2])
    return layer


def test_sum_aggregation_exact() -> None:
    layer = identity_gin(2)
    out, e = layer(PATH_X, PATH_EDGES, None)
    # node 0: x0 + x1; node 1: x1 + x0 + x2; node 2: x2 + x1 + x3; node 3: x3 + x2
    expected = torch.tensor([[11.0, 1.0], [111.0, 3.0], [1110.0, 6.0], [1100.0, 5.0]])
    assert torch.equal(out, expected)
    assert e is None


def test_learnable_eps_weighs_the_node_itself() -> None:
    layer = identity_gin(2)
    assert layer.conv.eps.requires_grad and layer.conv.eps.item() == 0.0
    with torch.no_grad():
        layer.conv.eps.fill_(0.5)
    out, _ = layer(PATH_X, PATH_EDGES, None)
    assert torch.allclose(out, 1.5 * PATH_X + neighbour_sum(PATH_X, PATH_EDGES))


def test_edge_features_pass_through_unchanged() -> None:
    e = torch.randn(PATH_EDGES.size(1), 2)
    assert GINLayer(2, 2, 2)(PATH_X, PATH_EDGES, e)[1] is e
    assert not GINLayer.updates_edges


def test_gin_0_fixes_eps_at_zero_and_trains_no_eps() -> None:
    layer = GINLayer(2, 2, 2, train_eps=False)
    set_identity(layer.conv.nn[0])
    set_identity(layer.conv.nn[2])
    assert not layer.conv.eps.requires_grad and layer.conv.eps.item() == 0.0
    assert "conv.eps" not in dict(layer.named_parameters())
    out, _ = layer(PATH_X, PATH_EDGES, None)
    assert torch.equal(out, PATH_X + neighbour_sum(PATH_X, PATH_EDGES))


def test_mlp_batch_norm_normalizes_the_hidden_layer_over_the_nodes() -> None:
    """Benchmarking GNNs' and Xu et al.'s GIN MLP: Linear -> BatchNorm -> ReLU -> Linear."""
    layer = GINLayer(2, 2, 2, mlp_batch_norm=True).train()
    linear_in, norm, _, linear_out = layer.conv.nn
    assert isinstance(norm, torch.nn.BatchNorm1d)
    set_identity(linear_in)
    set_identity(linear_out)
    out, _ = layer(PATH_X, PATH_EDGES, None)
    summed = PATH_X + neighbour_sum(PATH_X, PATH_EDGES)
    centred = summed - summed.mean(dim=0)
    expected = (centred / torch.sqrt(centred.pow(2).mean(dim=0) + norm.eps)).relu()
    torch.testing.assert_close(out, expected)
    # node 0 and node 1 (sums 11 and 111 in channel 0) lie below the mean (1332 / 4 = 333): ReLU zeroes them
    assert torch.equal(out[:2, 0], torch.zeros(2))
    assert len(list(GINLayer(2, 2, 2).conv.nn)) == 3  # the default keeps Linear -> ReLU -> Linear
