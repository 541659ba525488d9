"""APPNP on tiny graphs: exact parameter count, teleport probability 1 returns the prediction, one step of
personalized-PageRank propagation by hand, with and without edge weights; the K products on the network's
plan equal PyG's APPNP, and adjacency dropout in training is PyG's."""

from __future__ import annotations

import pytest
import torch

from graphbench.modules.layers import APPNPLayer
from graphbench.modules.network import count_parameters
from graphbench.modules.propagation import EdgePlan
from tests.modules._graphs import set_identity

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


#: one edge 0 - 1, both directions: with self-loops every degree is 2 and the normalized adjacency is all 1/2
PAIR = torch.tensor([[0, 1], [1, 0]])
PAIR_X = torch.tensor([[2.0, 0.0], [4.0, 6.0]])


def identity_appnp(**kwargs: float) -> APPNPLayer:
    layer = APPNPLayer(2, 2, 0, **kwargs).eval()
    set_identity(layer.linear)
    return layer


def test_one_propagation_step_exact() -> None:
    # H = relu(x) = x; Z1 = (1 - alpha) P H + alpha H with P H = [[3, 3], [3, 3]]
    out, _ = identity_appnp(K=1, alpha=0.5)(PAIR_X, PAIR, None)
    torch.testing.assert_close(out, torch.tensor([[2.5, 1.5], [3.5, 4.5]]))  # 1/sqrt(2)^2 rounds


def test_edge_weight_weighs_the_normalized_adjacency() -> None:
    # weights 3: degrees 1 + 3 = 4, P = [[1/4, 3/4], [3/4, 1/4]], P H = [[3.5, 4.5], [2.5, 1.5]]
    out, _ = identity_appnp(K=1, alpha=0.5)(PAIR_X, PAIR, None, edge_weight=torch.tensor([3.0, 3.0]))
    assert torch.equal(out, torch.tensor([[2.75, 2.25], [3.25, 3.75]]))


def test_dropout_acts_on_the_input_in_training_only() -> None:
    layer = identity_appnp(K=1, alpha=1.0, dropout=0.5)
    torch.manual_seed(0)
    layer.train()
    x = torch.ones(64, 2)
    out, _ = layer(x, torch.empty(2, 0, dtype=torch.long), None)
    assert set(out.unique().tolist()) == {0.0, 2.0}  # kept entries scaled by 1 / (1 - 0.5)


WEIGHTS = torch.tensor([0.5, 0.5, 2.0, 2.0, 1.0, 1.0, 3.0, 3.0])


def test_the_plan_propagates_as_pygs_appnp_in_training_and_evaluation() -> None:
    torch.manual_seed(0)
    layer = APPNPLayer(4, 3, 0, K=5, alpha=0.2, dropout=0.0, edge_dropout=0.0)
    x = features(4)
    expected = layer.propagate(layer.linear(torch.relu(x)), EDGE_INDEX, WEIGHTS)
    for module in (layer.train(), layer.eval()):
        out, _ = module(x, EDGE_INDEX, None, plan=EdgePlan(EDGE_INDEX, 5, WEIGHTS), edge_weight=WEIGHTS)
        torch.testing.assert_close(out, expected)


def test_the_layer_takes_the_networks_plan_one_product_a_step(monkeypatch: pytest.MonkeyPatch) -> None:
    layer = APPNPLayer(4, 3, 0, K=3, edge_dropout=0.0).eval()
    x = features(4)
    with pytest.raises(ValueError, match="other edge weights"):
        layer(x, EDGE_INDEX, None, plan=EdgePlan(EDGE_INDEX, 5, None), edge_weight=WEIGHTS)
    products = []
    original = EdgePlan.gcn_propagate
    monkeypatch.setattr(EdgePlan, "gcn_propagate", lambda plan, h, *a: products.append(plan) or original(plan, h, *a))
    plan = EdgePlan(EDGE_INDEX, 5, None)
    layer(x, EDGE_INDEX, None, plan=plan)
    assert products == [plan] * 3


def test_adjacency_dropout_in_training_is_pygs() -> None:
    layer = APPNPLayer(4, 3, 0, K=2, dropout=0.0, edge_dropout=0.5).train()
    x = features(4)
    torch.manual_seed(1)
    out, _ = layer(x, EDGE_INDEX, None, plan=EdgePlan(EDGE_INDEX, 5, None))
    torch.manual_seed(1)
    assert torch.equal(out, layer.propagate(layer.linear(torch.relu(x)), EDGE_INDEX, None))
    torch.manual_seed(2)
    assert not torch.equal(out, layer(x, EDGE_INDEX, None)[0])  # another draw of dropped edges
