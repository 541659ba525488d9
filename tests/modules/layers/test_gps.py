"""GPS layer: attention stays inside each graph, the parts compose as in Rampášek et al. (2022)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from graphbench.modules.layers import GPSLayer

# two graphs: a triangle (nodes 0-2) and an edge (nodes 3-4)
EDGES = torch.tensor([[0, 1, 1, 2, 2, 0, 3, 4], [1, 0, 2, 1, 0, 2, 4, 3]])
BATCH = torch.tensor([0, 0, 0, 1, 1])


def gps(**kwargs) -> GPSLayer:
    torch.manual_seed(0)
    return GPSLayer(8, 8, 8, **kwargs).eval()


@pytest.mark.parametrize("local", ["gine", "gatedgcn"])
def test_graphs_in_a_batch_do_not_see_each_other(local: str) -> None:
    layer = gps(local=local, heads=2)
    x, e = torch.randn(5, 8), torch.randn(8, 8)
    out, _ = layer(x, EDGES, e, BATCH)
    x2 = x.clone()
    x2[3:] += 5.0  # change only the second graph
    out2, _ = layer(x2, EDGES, e, BATCH)
    assert torch.allclose(out[:3], out2[:3], atol=1e-6)
    alone, _ = layer(x[:3], EDGES[:, :6], e[:6], torch.zeros(3, dtype=torch.long))
    assert torch.allclose(out[:3], alone, atol=1e-6)


def test_sum_of_local_and_attention_then_ffn_by_hand() -> None:
    layer = gps(local="gine", heads=2, norm="none")
    x, e = torch.randn(5, 8), torch.randn(8, 8)
    out, e_out = layer(x, EDGES, e, BATCH)
    h_local = x + layer.local_model(x, EDGES, e)[0]
    rows = []
    for graph in (slice(0, 3), slice(3, 5)):
        xg = x[graph].unsqueeze(0)
        rows.append(layer.attn(xg, xg, xg, need_weights=False)[0][0])
    h = h_local + x + torch.cat(rows)
    expected = h + layer.ff_out(torch.relu(layer.ff_in(h)))
    assert torch.allclose(out, expected, atol=1e-5)
    assert e_out is e and not layer.updates_edges


def test_gatedgcn_local_updates_edges() -> None:
    layer = gps(local="gatedgcn", heads=2)
    e = torch.randn(8, 8)
    _, e_out = layer(torch.randn(5, 8), EDGES, e, BATCH)
    assert layer.updates_edges and e_out.shape == e.shape and not torch.allclose(e_out, e)


def test_single_graph_without_batch_vector() -> None:
    layer = gps(heads=4)
    x, e = torch.randn(3, 8), torch.randn(6, 8)
    assert torch.allclose(layer(x, EDGES[:, :6], e)[0], layer(x, EDGES[:, :6], e, torch.zeros(3, dtype=torch.long))[0])


def test_declares_batch_and_self_contained_for_the_network() -> None:
    assert GPSLayer.needs_batch and GPSLayer.self_contained


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"heads": 3},
            r"^heads=3 must divide out_dim=8 \(gps's width, concatenated heads\): the width must be a positive multiple of 3$",
        ),
        ({"local": "gcn"}, r"^local='gcn' is not one of \['gine', 'gatedgcn'\]$"),
        ({"norm": "groupnorm"}, "valid"),
    ],
)
def test_bad_arguments_name_the_fix(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        GPSLayer(8, 8, 8, **kwargs)


def test_reset_parameters_reinitialises_attention() -> None:
    layer = gps()
    with torch.no_grad():
        for p in layer.parameters():
            p.fill_(0.123)
    layer.reset_parameters()
    assert not torch.all(layer.attn.in_proj_weight == 0.123)
    assert all(isinstance(m, nn.Module) for m in layer.children())


def test_network_passes_batch_and_uses_the_output_as_is() -> None:
    from functools import partial

    from torch_geometric.data import Batch, Data

    from graphbench.data.info import DatasetInfo, FeatureSpec
    from graphbench.modules.heads import MLPHead
    from graphbench.modules.network import GraphNetwork
    from graphbench.modules.norms import NodeNorm

    torch.manual_seed(0)
    dense = FeatureSpec("dense", dim=3), FeatureSpec("dense", dim=2)
    info = DatasetInfo("toy", "graph", "binary", 1, "accuracy", True, *dense)
    net = GraphNetwork(
        info=info,
        layer=partial(GPSLayer, heads=2),
        head=partial(MLPHead, num_layers=1),
        norm=partial(NodeNorm, kind="batchnorm"),
        hidden_dim=8,
        num_layers=2,
    ).eval()
    assert all(isinstance(n, nn.Identity) for n in [*net.node_norms, *net.edge_norms])
    triangle = Data(x=torch.randn(3, 3), edge_index=EDGES[:, :6], edge_attr=torch.randn(6, 2))
    pair = Data(x=torch.randn(2, 3), edge_index=EDGES[:, 6:] - 3, edge_attr=torch.randn(2, 2))
    batch = Batch.from_data_list([triangle, pair])
    h, e = net.node_encoder(batch.x), net.edge_encoder(batch.edge_attr)
    for layer in net.layers:
        h, e = layer(h, batch.edge_index, e, batch.batch)
    assert torch.allclose(net.embed(batch), h, atol=1e-6)
    expected = sum(p.numel() for m in (net.node_encoder, net.edge_encoder, net.layers, net.head) for p in m.parameters())
    assert sum(p.numel() for p in net.parameters()) == expected
