"""The layer contract: every registered layer is a Layer with the declared attributes, the network refuses
a layer that is not one in one line and calls a layer as its attributes say, and the plan helpers."""

from __future__ import annotations

from functools import partial

import pytest
import torch
from torch import Tensor, nn
from torch_geometric.data import Data

import graphbench.modules.layers as layers
from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.modules.heads import MLPHead
from graphbench.modules.layers.contract import CONTRACT, Layer, check_layer, gcn_product
from graphbench.modules.network import GraphNetwork
from graphbench.modules.norms import NodeNorm
from graphbench.modules.propagation import EdgePlan
from graphbench.vocabulary.errors import ArgumentError

#: every registered layer's contract: (updates_edges, uses_edge_attr, uses_edge_weight, uses_plan,
#: needs_batch, self_contained), in the order of CONTRACT
DECLARED: dict[str, tuple[bool, bool, bool, bool, bool, bool]] = {
    "APPNPLayer": (False, False, True, True, False, False),
    "GATLayer": (False, True, False, False, False, False),
    "GATv2Layer": (False, True, False, False, False, False),
    "GCNIILayer": (False, False, True, False, False, True),
    "GCNLayer": (False, False, True, True, False, False),
    "GINELayer": (False, True, True, True, False, False),
    "GINLayer": (False, False, True, False, False, False),
    "GPSLayer": (False, True, False, False, True, True),
    "GRANDLayer": (False, False, True, True, False, False),
    "GatedGCNLayer": (True, True, False, True, False, False),
    "MLPLayer": (False, False, False, False, False, False),
    "MixHopLayer": (False, False, True, False, False, False),
    "MoNetLayer": (False, False, False, False, False, False),
    "SAGELayer": (False, False, True, False, False, False),
}

INFO = DatasetInfo("toy", "node", "multiclass", 2, "accuracy", False, FeatureSpec("dense", 2), None)
#: the path 0 - 1 - 2, both directions
EDGES = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])


def test_the_contract_names_six_attributes_with_their_documented_defaults() -> None:
    assert CONTRACT == ("updates_edges", "uses_edge_attr", "uses_edge_weight", "uses_plan", "needs_batch", "self_contained")
    assert tuple(getattr(Layer, name) for name in CONTRACT) == (False, True, False, False, False, False)


def test_the_table_covers_every_registered_layer() -> None:
    assert sorted(DECLARED) == sorted(layers.__all__)


@pytest.mark.parametrize("name", sorted(layers.__all__))
def test_every_registered_layer_satisfies_the_contract(name: str) -> None:
    cls = getattr(layers, name)
    assert issubclass(cls, Layer)
    layer = cls(12, 12, 12)  # 12: a multiple of GAT's and GPS's 4 heads and of MixHop's 3 powers
    assert check_layer(layer) is layer
    assert tuple(getattr(layer, attribute) for attribute in CONTRACT) == DECLARED[name]


def test_gps_updates_edges_with_the_gatedgcn_local_model_only() -> None:
    assert check_layer(layers.GPSLayer(8, 8, 8, local="gatedgcn")).updates_edges
    assert not check_layer(layers.GPSLayer(8, 8, 8, local="gine")).updates_edges


class Bare(nn.Module):
    """A layer written without the contract."""

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None) -> tuple[Tensor, Tensor | None]:
        return x, edge_attr


class Misdeclared(Layer):
    uses_plan = None  # type: ignore[assignment]  # not a bool

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None) -> tuple[Tensor, Tensor | None]:
        return x, edge_attr


class Declared(Bare):
    """Declares every attribute, but is no Layer."""

    updates_edges = uses_edge_attr = uses_edge_weight = uses_plan = needs_batch = self_contained = False


def network(layer: object, num_layers: int = 1) -> GraphNetwork:
    return GraphNetwork(
        info=INFO,
        layer=layer,  # type: ignore[arg-type]
        head=partial(MLPHead, num_layers=1),
        norm=partial(NodeNorm, kind="none"),
        hidden_dim=4,
        num_layers=num_layers,
    )


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        (Bare, "layer (Bare) does not declare " + ", ".join(CONTRACT) + " as a bool; subclass "),
        (Misdeclared, "layer (Misdeclared) does not declare uses_plan as a bool; subclass "),
        (Declared, "layer (Declared) is not a graphbench.modules.layers.contract.Layer; subclass "),
    ],
)
def test_the_network_refuses_a_layer_outside_the_contract_in_one_line(cls: type, message: str) -> None:
    with pytest.raises(ArgumentError) as error:
        network(lambda in_dim, out_dim, edge_dim: cls())
    text = str(error.value)
    assert "\n" not in text
    assert text.startswith(message)
    assert text.endswith(
        "graphbench.modules.layers.contract.Layer, which declares " + ", ".join(CONTRACT) + " with their defaults"
    )


class Recorder(Layer):
    """Records the keyword arguments the network hands it; the identity on nodes."""

    def __init__(self, in_dim: int, out_dim: int, edge_dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(()))
        self.calls: list[dict[str, object]] = []

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None, **extra: object) -> tuple[Tensor, Tensor | None]:
        self.calls.append({"edge_attr": edge_attr, **extra})
        return x * self.weight, edge_attr


class Asking(Recorder):
    uses_edge_attr = False
    uses_edge_weight = True
    uses_plan = True
    needs_batch = True


def test_the_network_calls_a_layer_as_its_contract_says() -> None:
    graph = Data(x=torch.ones(3, 2), edge_index=EDGES, edge_weight=torch.tensor([1.0, 2.0, 3.0, 4.0]))
    plain = network(Recorder)
    plain(graph)
    (call,) = plain.layers[0].calls
    assert sorted(call) == ["edge_attr"] and isinstance(call["edge_attr"], Tensor)  # encoded constant edge features
    asking = network(Asking)
    asking(graph)
    (call,) = asking.layers[0].calls
    assert asking.edge_encoder is None and call["edge_attr"] is None
    assert sorted(call) == ["batch", "edge_attr", "edge_weight", "plan"]
    assert call["batch"] is None and call["edge_weight"] is graph.edge_weight
    plan = call["plan"]
    assert isinstance(plan, EdgePlan) and plan.edge_index is EDGES and plan.edge_weight is graph.edge_weight


def test_plan_for_takes_the_networks_plan_or_builds_one() -> None:
    layer = layers.GINELayer(2, 2, 2)
    given = EdgePlan(EDGES, 3, torch.ones(4))
    assert layer.plan_for(given, EDGES, 3) is given
    built = layer.plan_for(None, EDGES, 3)
    assert built.edge_index is EDGES and built.num_nodes == 3 and built.edge_weight is None


def test_gcn_plan_for_needs_the_plan_of_the_same_edge_weights() -> None:
    layer = layers.GCNLayer(2, 2, 2)
    weight = torch.ones(4)
    given = EdgePlan(EDGES, 3, weight)
    assert layer.gcn_plan_for(given, EDGES, 3, weight) is given
    built = layer.gcn_plan_for(None, EDGES, 3, weight)
    assert built.edge_weight is weight and built.num_nodes == 3
    with pytest.raises(ValueError, match=r"^GCNLayer: the plan was built with other edge weights than the layer was given$"):
        layer.gcn_plan_for(given, EDGES, 3, None)
    with pytest.raises(ValueError, match=r"^GRANDLayer: the plan was built with other edge weights"):
        layers.GRANDLayer(2, 2, 2).gcn_plan_for(EdgePlan(EDGES, 3), EDGES, 3, weight)


def test_gcn_product_exact_and_float32_under_cpu_autocast() -> None:
    # A + I on the path 0 - 1 - 2: degrees 2, 3, 2; entry (i, j) is 1 / sqrt(d_i d_j)
    h = torch.tensor([[6.0], [0.0], [6.0]])
    expected = torch.tensor([[6.0 / 2], [2 * 6.0 / 6**0.5], [6.0 / 2]])
    plan = EdgePlan(EDGES, 3)
    assert torch.allclose(gcn_product(plan, h), expected)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = gcn_product(plan, h.bfloat16())
    assert out.dtype == torch.float32 and torch.allclose(out, expected)
