"""GINE on a hand-built path: with an identity MLP it is exactly (1 + eps) x_i + sum_j relu(x_j + e_ji),
through the batch's plan (sparse) and through PyG's GINEConv alike."""

from __future__ import annotations

import pytest
import torch

from graphbench.modules.layers import GINELayer
from graphbench.modules.propagation import EdgePlan
from tests.modules._graphs import PATH_EDGES, PATH_X, set_identity

#: every edge feature is (-5, 0): the message from node 0, x_0 + e = (-4, 0), is rectified to zero
EDGE_ATTR = torch.tensor([[-5.0, 0.0]]).expand(PATH_EDGES.size(1), 2)
#: node 0 <- 1: (5, 1); node 1 <- 0, 2: (0, 0) + (95, 2); node 2 <- 1, 3: (5, 1) + (995, 3); node 3 <- 2: (95, 2)
EXPECTED = PATH_X + torch.tensor([[5.0, 1.0], [95.0, 2.0], [1000.0, 4.0], [95.0, 2.0]])


def identity_gine(sparse: bool) -> GINELayer:
    layer = GINELayer(2, 2, 2, sparse=sparse)
    set_identity(layer.conv.nn[0])
    set_identity(layer.conv.nn[2])
    return layer


@pytest.mark.parametrize("sparse", [True, False])
def test_rectified_edge_messages_exact(sparse: bool) -> None:
    out, e = identity_gine(sparse)(PATH_X, PATH_EDGES, EDGE_ATTR)
    assert torch.equal(out, EXPECTED)
    assert e is EDGE_ATTR


def test_the_networks_plan_gives_the_same_result() -> None:
    layer = identity_gine(True)
    out, _ = layer(PATH_X, PATH_EDGES, EDGE_ATTR, plan=EdgePlan(PATH_EDGES, 4))
    assert torch.equal(out, EXPECTED)


def test_learnable_eps_weighs_the_node_itself() -> None:
    layer = identity_gine(True)
    assert layer.conv.eps.requires_grad and layer.conv.eps.item() == 0.0
    with torch.no_grad():
        layer.conv.eps.fill_(1.0)
    out, _ = layer(PATH_X, PATH_EDGES, EDGE_ATTR)
    assert torch.equal(out, EXPECTED + PATH_X)


def test_edge_features_of_another_width_are_projected() -> None:
    assert GINELayer(2, 2, 2).conv.lin is None
    lin = GINELayer(2, 2, 3).conv.lin
    assert lin is not None and (lin.in_channels, lin.out_channels) == (3, 2)


def test_missing_edge_features_name_the_fix() -> None:
    with pytest.raises(ValueError, match="gine needs edge features"):
        GINELayer(2, 2, 2)(PATH_X, PATH_EDGES, None)


def test_lrgb_inner_mlp_and_fixed_eps() -> None:
    """toenshoff/LRGB's GINEConvLayer: Linear -> GELU -> Dropout -> Linear -> Dropout, eps a buffer at 0."""
    layer = GINELayer(4, 4, 4, train_eps=False, mlp_activation="gelu", mlp_dropout=0.1)
    kinds = [type(m) for m in layer.conv.nn]
    assert kinds == [torch.nn.Linear, torch.nn.GELU, torch.nn.Dropout, torch.nn.Linear, torch.nn.Dropout]
    assert [m.p for m in layer.conv.nn if isinstance(m, torch.nn.Dropout)] == [0.1, 0.1]
    assert float(layer.conv.eps) == 0.0 and "conv.eps" not in dict(layer.named_parameters())
    assert sum(p.numel() for p in layer.parameters()) == 2 * (4 * 4 + 4)
