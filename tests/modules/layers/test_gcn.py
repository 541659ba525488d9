"""GCNLayer: exact values on a hand-built pair, sparse and through PyG's GCNConv, ``improved``; its sparse
propagation under CPU mixed precision (``trainer.precision=bf16-mixed``): the CPU's sparse CSR product
has no bfloat16 kernel, so the layer propagates in float32 there."""

from __future__ import annotations

import pytest
import torch

from graphbench.modules.layers.gcn import GCNLayer
from graphbench.modules.propagation import EdgePlan
from tests.modules._graphs import set_identity


def test_sparse_gcn_under_cpu_bf16_autocast_matches_float32_within_bf16_rounding() -> None:
    torch.manual_seed(0)
    layer = GCNLayer(4, 3, edge_dim=0, sparse=True)
    x = torch.randn(5, 4)
    edge_index = torch.tensor([[0, 1, 1, 2, 3, 4], [1, 0, 2, 1, 4, 3]])
    expected, _ = layer(x, edge_index, None)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, _ = layer(x, edge_index, None)
    assert out.dtype == torch.float32
    assert torch.allclose(out, expected, rtol=0.02, atol=0.02)
    out.sum().backward()
    assert layer.conv.lin.weight.grad is not None and bool(torch.isfinite(layer.conv.lin.weight.grad).all())


#: one edge 0 - 1, both directions
PAIR = torch.tensor([[0, 1], [1, 0]])
PAIR_X = torch.tensor([[3.0, 0.0], [6.0, 3.0]])


def identity_gcn(**kwargs: bool) -> GCNLayer:
    layer = GCNLayer(2, 2, 0, **kwargs)
    set_identity(layer.conv.lin)
    with torch.no_grad():
        layer.conv.bias.zero_()
    return layer


@pytest.mark.parametrize("sparse", [True, False])
def test_normalized_adjacency_exact(sparse: bool) -> None:
    # A + I has degrees 2: every entry of the normalized adjacency is 1/2 (1/sqrt(2)^2 rounds)
    e = torch.randn(2, 4)
    out, e_out = identity_gcn(sparse=sparse)(PAIR_X, PAIR, e)
    torch.testing.assert_close(out, torch.tensor([[4.5, 1.5], [4.5, 1.5]]))
    assert e_out is e


def test_improved_adds_self_loops_of_weight_two_and_runs_pygs_conv() -> None:
    # A + 2I has degrees 3: [[2/3, 1/3], [1/3, 2/3]]
    layer = identity_gcn(sparse=True, improved=True)
    assert not layer.sparse
    out, _ = layer(PAIR_X, PAIR, None, edge_weight=torch.ones(2))
    torch.testing.assert_close(out, torch.tensor([[4.0, 1.0], [5.0, 2.0]]))


def test_improved_without_edge_weights_adds_self_loops_of_weight_two() -> None:
    # PyG 2.8.1's GCNConv alone normalizes A + I here (its gcn_norm drops the fill value without edge weights)
    out, _ = identity_gcn(improved=True)(PAIR_X, PAIR, None)
    torch.testing.assert_close(out, torch.tensor([[4.0, 1.0], [5.0, 2.0]]))


def test_the_plan_must_carry_the_edge_weights_the_layer_was_given() -> None:
    with pytest.raises(ValueError, match="GCNLayer: the plan was built with other edge weights"):
        identity_gcn()(PAIR_X, PAIR, None, plan=EdgePlan(PAIR, 2), edge_weight=torch.ones(2))
