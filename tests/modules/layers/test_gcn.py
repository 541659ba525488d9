"""GCNLayer: exact values on a hand-built pair, sparse and through PyG's GCNConv, ``improved`` on both paths; its sparse
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


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("edge_weight", [None, torch.ones(2)])
def test_improved_adds_self_loops_of_weight_two_on_both_paths(sparse: bool, edge_weight: torch.Tensor | None) -> None:
    # A + 2I has degrees 3: [[2/3, 1/3], [1/3, 2/3]] (PyG 2.8.1's GCNConv alone, without edge weights,
    # would normalize A + I: its gcn_norm drops the fill value)
    layer = identity_gcn(sparse=sparse, improved=True)
    assert layer.sparse is sparse
    out, _ = layer(PAIR_X, PAIR, None, edge_weight=edge_weight)
    torch.testing.assert_close(out, torch.tensor([[4.0, 1.0], [5.0, 2.0]]))


def test_improved_sparse_equals_pygs_improved_conv_with_weights_and_an_existing_self_loop() -> None:
    # an existing self-loop keeps its own weight (PyG's add_remaining_self_loops); node 3 gets the fill 2
    edge_index = torch.tensor([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 2, 1]])
    edge_weight = torch.tensor([0.5, 1.0, 2.0, 1.5, 3.0, 0.25])
    torch.manual_seed(0)
    x = torch.randn(4, 3, dtype=torch.float64)
    sparse = GCNLayer(3, 2, 0, sparse=True, improved=True).double()
    plain = GCNLayer(3, 2, 0, sparse=False, improved=True).double()
    plain.load_state_dict(sparse.state_dict())
    for weight in (edge_weight.double(), None):
        torch.testing.assert_close(
            sparse(x, edge_index, None, edge_weight=weight)[0], plain(x, edge_index, None, edge_weight=weight)[0]
        )
    plan = EdgePlan(edge_index, 4, edge_weight.double())
    assert (
        plan.normalized_adjacency(2.0) is plan.normalized_adjacency(2.0) and plan.normalized_adjacency(1.0) is plan.gcn_adjacency
    )


def test_the_plan_must_carry_the_edge_weights_the_layer_was_given() -> None:
    with pytest.raises(ValueError, match="GCNLayer: the plan was built with other edge weights"):
        identity_gcn()(PAIR_X, PAIR, None, plan=EdgePlan(PAIR, 2), edge_weight=torch.ones(2))
