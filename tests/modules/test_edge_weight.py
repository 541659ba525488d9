"""Edge weights (GraphSAINT's aggregator normalization 1/alpha_uv on ``batch.edge_weight``) through the
network and the layers that take them, on tiny hand-built graphs with exact values; without weights
nothing changes."""

from __future__ import annotations

from functools import partial

import pytest
import torch
from torch import Tensor, nn
from torch_geometric.data import Batch, Data
from torch_geometric.nn import GCNConv

from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.modules.heads import MLPHead
from graphbench.modules.layers import (
    APPNPLayer,
    GATLayer,
    GCNIILayer,
    GCNLayer,
    GINELayer,
    GINLayer,
    MixHopLayer,
    SAGELayer,
)
from graphbench.modules.network import GraphNetwork
from graphbench.modules.norms import NodeNorm
from graphbench.modules.propagation import EdgePlan
from tests.modules._graphs import PATH_EDGES, PATH_X, set_identity

#: GCN graph: directed edges j -> i with weights chosen so that every weighted degree
#: d_i = 1 + sum_j w_ji is 4 or 16: node 0 <- 1 (3); node 1 <- 0 (3), 2 (12); node 2 <- 1 (1), 3 (2);
#: node 3 <- 2 (15). Degrees 4, 16, 4, 16; every normalized weight w_ji / sqrt(d_i d_j) is dyadic.
GCN_EDGES = torch.tensor([[1, 0, 2, 1, 3, 2], [0, 1, 1, 2, 2, 3]])
GCN_WEIGHTS = torch.tensor([3.0, 3.0, 12.0, 1.0, 2.0, 15.0])
#: D^-1/2 (A_w + I) D^-1/2 PATH_X by hand, A_w[i, j] = w_ji:
#: row 0: x0/4 + 3/8 x1; row 1: x1/16 + 3/8 x0 + 3/2 x2; row 2: x2/4 + x1/8 + x3/4; row 3: x3/16 + 15/8 x2
GCN_EXPECTED = torch.tensor([[4.0, 0.375], [151.0, 3.0625], [276.25, 1.375], [250.0, 3.9375]])

#: PATH_EDGES (0->1, 1->0, 1->2, 2->1, 2->3, 3->2) weighted so that every node's weights add up to a
#: power of two: node 0 <- 1 (2); node 1 <- 0 (1), 2 (3); node 2 <- 1 (3), 3 (5); node 3 <- 2 (4)
PATH_WEIGHTS = torch.tensor([1.0, 2.0, 3.0, 3.0, 4.0, 5.0])
#: sum_j w_ji x_j: node 0: 2 x1; node 1: x0 + 3 x2; node 2: 3 x1 + 5 x3; node 3: 4 x2
PATH_WEIGHTED_SUM = torch.tensor([[20.0, 2.0], [301.0, 6.0], [5030.0, 18.0], [400.0, 8.0]])
#: ... divided by sum_j w_ji = 2, 4, 8, 4
PATH_WEIGHTED_MEAN = torch.tensor([[10.0, 1.0], [75.25, 1.5], [628.75, 2.25], [100.0, 2.0]])


def identity_gcn(sparse: bool) -> GCNLayer:
    layer = GCNLayer(2, 2, 2, sparse=sparse)
    set_identity(layer.conv.lin)
    with torch.no_grad():
        layer.conv.bias.zero_()
    return layer


@pytest.mark.parametrize("sparse", [True, False])
def test_gcn_with_edge_weight_exact(sparse: bool) -> None:
    out, e = identity_gcn(sparse)(PATH_X, GCN_EDGES, None, edge_weight=GCN_WEIGHTS)
    assert torch.equal(out, GCN_EXPECTED)
    assert e is None


def test_pyg_gcnconv_gives_the_same_exact_values() -> None:
    conv = GCNConv(2, 2)
    set_identity(conv.lin)
    with torch.no_grad():
        conv.bias.zero_()
    assert torch.equal(conv(PATH_X, GCN_EDGES, GCN_WEIGHTS), GCN_EXPECTED)


@pytest.mark.parametrize("sparse", [True, False])
def test_gcn_layer_equals_pyg_gcnconv_with_the_same_weights(sparse: bool) -> None:
    torch.manual_seed(0)
    layer = GCNLayer(3, 4, 3, sparse=sparse).double()
    conv = GCNConv(3, 4).double()
    conv.load_state_dict(layer.conv.state_dict())
    # a repeated edge, a self-loop with its own weight, an isolated node (5)
    edge_index = torch.tensor([[0, 1, 2, 2, 3, 3, 4], [1, 2, 1, 2, 2, 2, 0]])
    weight = torch.tensor([0.5, 2.0, 1.5, 3.0, 0.25, 4.0, 7.0], dtype=torch.float64)
    x = torch.randn(6, 3, dtype=torch.float64, requires_grad=True)
    out = layer(x, edge_index, None, edge_weight=weight)[0]
    expected = conv(x, edge_index, weight)
    torch.testing.assert_close(out, expected, rtol=0, atol=1e-12)
    (grad,) = torch.autograd.grad(out.square().sum(), x)
    (grad_expected,) = torch.autograd.grad(expected.square().sum(), x)
    torch.testing.assert_close(grad, grad_expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("sparse", [True, False])
def test_gcn_without_edge_weight_is_unchanged(sparse: bool) -> None:
    torch.manual_seed(0)
    layer = GCNLayer(2, 2, 2, sparse=sparse)
    unweighted = layer(PATH_X, GCN_EDGES, None)[0]
    torch.testing.assert_close(unweighted, layer.conv(PATH_X, GCN_EDGES), rtol=0, atol=1e-4)  # PyG's GCNConv
    assert torch.equal(layer(PATH_X, GCN_EDGES, None, edge_weight=torch.ones(6))[0], unweighted)
    assert not torch.equal(layer(PATH_X, GCN_EDGES, None, edge_weight=GCN_WEIGHTS)[0], unweighted)


def test_plan_gcn_propagation_uses_its_weights() -> None:
    assert torch.equal(EdgePlan(GCN_EDGES, 4, GCN_WEIGHTS).gcn_propagate(PATH_X), GCN_EXPECTED)
    with pytest.raises(ValueError, match="edge_weight must have shape"):
        EdgePlan(GCN_EDGES, 4, torch.ones(5))
    with pytest.raises(ValueError, match="other edge weights"):
        identity_gcn(True)(PATH_X, GCN_EDGES, None, plan=EdgePlan(GCN_EDGES, 4), edge_weight=GCN_WEIGHTS)


def identity_sage(**kwargs: object) -> SAGELayer:
    layer = SAGELayer(2, 2, 2, **kwargs)  # type: ignore[arg-type]
    set_identity(layer.conv.lin_l)  # the aggregated neighbours (carries the bias)
    set_identity(layer.conv.lin_r, 0.0)  # the node itself
    return layer


def test_sage_weighted_mean_exact() -> None:
    out, e = identity_sage()(PATH_X, PATH_EDGES, None, edge_weight=PATH_WEIGHTS)
    assert torch.equal(out, PATH_WEIGHTED_MEAN)
    assert e is None


def test_sage_weighted_sum_exact() -> None:
    out, _ = identity_sage(aggr="sum")(PATH_X, PATH_EDGES, None, edge_weight=PATH_WEIGHTS)
    assert torch.equal(out, PATH_WEIGHTED_SUM)


def test_sage_weighted_root_and_normalize_as_pyg() -> None:
    torch.manual_seed(0)
    layer = SAGELayer(2, 3, 2, normalize=True)
    ones = layer(PATH_X, PATH_EDGES, None, edge_weight=torch.ones(6))[0]
    torch.testing.assert_close(ones, layer.conv(PATH_X, PATH_EDGES), rtol=0, atol=1e-5)
    weighted = layer(PATH_X, PATH_EDGES, None, edge_weight=PATH_WEIGHTS)[0]
    manual = layer.conv.lin_l(PATH_WEIGHTED_MEAN) + layer.conv.lin_r(PATH_X)
    torch.testing.assert_close(weighted, manual / manual.norm(dim=-1, keepdim=True), rtol=0, atol=1e-6)


def test_sage_unit_weights_and_isolated_node() -> None:
    layer = identity_sage()
    edges = PATH_EDGES[:, :2]  # only 0 <-> 1: nodes 2 and 3 have no in-neighbour
    out = layer(PATH_X, edges, None, edge_weight=torch.tensor([4.0, 0.5]))[0]
    assert torch.equal(out, torch.tensor([[10.0, 1.0], [1.0, 0.0], [0.0, 0.0], [0.0, 0.0]]))
    assert torch.equal(layer(PATH_X, PATH_EDGES, None, edge_weight=torch.ones(6))[0], layer(PATH_X, PATH_EDGES, None)[0])


def test_sage_max_ignores_edge_weight() -> None:
    layer = identity_sage(aggr="max")
    assert torch.equal(layer(PATH_X, PATH_EDGES, None, edge_weight=PATH_WEIGHTS)[0], layer(PATH_X, PATH_EDGES, None)[0])


def test_gin_weighted_sum_exact() -> None:
    layer = GINLayer(2, 2, 2)
    set_identity(layer.conv.nn[0])
    set_identity(layer.conv.nn[2])
    out, _ = layer(PATH_X, PATH_EDGES, None, edge_weight=PATH_WEIGHTS)  # eps = 0: x_i + sum_j w_ji x_j
    assert torch.equal(out, PATH_X + PATH_WEIGHTED_SUM)


@pytest.mark.parametrize("sparse", [True, False])
def test_gine_weighted_sum_exact(sparse: bool) -> None:
    layer = GINELayer(2, 2, 2, sparse=sparse)
    set_identity(layer.conv.nn[0])
    set_identity(layer.conv.nn[2])
    zero_edges = torch.zeros(PATH_EDGES.size(1), 2)  # ReLU(x_j + 0) = x_j on these non-negative features
    out, e = layer(PATH_X, PATH_EDGES, zero_edges, edge_weight=PATH_WEIGHTS)
    assert torch.equal(out, PATH_X + PATH_WEIGHTED_SUM)
    assert e is zero_edges


WEIGHTED_LAYERS = [
    partial(GCNLayer, sparse=True),
    partial(GCNLayer, sparse=False),
    SAGELayer,
    GINLayer,
    partial(GINELayer, sparse=True),
    partial(GINELayer, sparse=False),
    partial(APPNPLayer, K=3, dropout=0.0),
    partial(GCNIILayer, num_convs=2, dropout=0.0),
    partial(MixHopLayer, powers=[0, 1]),
]


@pytest.mark.parametrize("layer", WEIGHTED_LAYERS)
def test_unit_weights_change_nothing_and_others_do(layer: partial) -> None:
    torch.manual_seed(0)
    module = layer(in_dim=4, out_dim=4, edge_dim=4).double().eval()
    assert type(module).uses_edge_weight
    x = torch.randn(4, 4, dtype=torch.float64)
    e = torch.randn(PATH_EDGES.size(1), 4, dtype=torch.float64)
    plain = module(x, PATH_EDGES, e)[0]
    ones = module(x, PATH_EDGES, e, edge_weight=torch.ones(6, dtype=torch.float64))[0]
    weighted = module(x, PATH_EDGES, e, edge_weight=PATH_WEIGHTS.double())[0]
    # unweighted, gcn_norm makes float32 weights; float64 ones keep float64
    torch.testing.assert_close(ones, plain, rtol=0, atol=1e-6)
    assert not torch.allclose(weighted, plain)


def node_network(layer: object, num_layers: int = 1) -> GraphNetwork:
    info = DatasetInfo("toy", "node", "multiclass", 2, "accuracy", True, FeatureSpec("dense", dim=2), None)
    return GraphNetwork(
        info=info,
        layer=layer,  # type: ignore[arg-type]
        head=partial(MLPHead, num_layers=1),
        norm=partial(NodeNorm, kind="none"),
        hidden_dim=2,
        num_layers=num_layers,
        residual=False,
        encode_inputs=False,
        last_layer_outputs=True,
    )


@pytest.mark.parametrize("sparse", [True, False])
def test_network_passes_the_batch_edge_weight_to_gcn(sparse: bool) -> None:
    net = node_network(partial(GCNLayer, sparse=sparse))
    set_identity(net.layers[0].conv.lin)
    with torch.no_grad():
        net.layers[0].conv.bias.zero_()
    graph = Data(x=PATH_X, edge_index=GCN_EDGES, edge_weight=GCN_WEIGHTS)
    assert torch.equal(net(graph), GCN_EXPECTED)
    assert torch.equal(net(Batch.from_data_list([graph])), GCN_EXPECTED)
    unweighted = Data(x=PATH_X, edge_index=GCN_EDGES)
    assert torch.equal(net(unweighted), net.layers[0](PATH_X, GCN_EDGES, None)[0])


def test_network_passes_the_batch_edge_weight_to_sage() -> None:
    net = node_network(SAGELayer)
    set_identity(net.layers[0].conv.lin_l)
    set_identity(net.layers[0].conv.lin_r, 0.0)
    assert torch.equal(net(Data(x=PATH_X, edge_index=PATH_EDGES, edge_weight=PATH_WEIGHTS)), PATH_WEIGHTED_MEAN)


def _gat_outputs(edge_weight: Tensor | None) -> Tensor:
    torch.manual_seed(0)
    net = node_network(partial(GATLayer, heads=1), num_layers=2).eval()
    graph = Data(x=PATH_X, edge_index=PATH_EDGES)
    if edge_weight is not None:
        graph.edge_weight = edge_weight
    return net(graph)


def test_layers_without_edge_weights_ignore_them() -> None:
    assert not GATLayer.uses_edge_weight
    assert torch.equal(_gat_outputs(PATH_WEIGHTS), _gat_outputs(None))


def test_every_layer_declares_whether_it_takes_edge_weights() -> None:
    import graphbench.modules.layers as layers

    for name in layers.__all__:
        cls = getattr(layers, name)
        assert isinstance(cls.__dict__.get("uses_edge_weight"), bool), name
        assert issubclass(cls, nn.Module)
