"""Every layer is permutation equivariant, and every model config runs forward and backward on a
two-graph batch of Peptides-func-shaped inputs."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from omegaconf import DictConfig
from torch import nn
from torch_geometric.data import Batch, Data

from graphbench.build.model import network_builder
from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.modules import layers as L

LAYERS: dict[str, Callable[[], nn.Module]] = {
    "gcn": lambda: L.GCNLayer(8, 8, 8),
    "gine": lambda: L.GINELayer(8, 8, 8),
    "gatedgcn": lambda: L.GatedGCNLayer(8, 8, 8),
    "gin": lambda: L.GINLayer(8, 8, 8),
    "gat": lambda: L.GATLayer(8, 8, 8, heads=2),
    "gatv2": lambda: L.GATv2Layer(8, 8, 8, heads=2),
    "sage": lambda: L.SAGELayer(8, 8, 8),
    "monet": lambda: L.MoNetLayer(8, 8, 8),
    "gps": lambda: L.GPSLayer(8, 8, 8, heads=2),
    "gps-gatedgcn": lambda: L.GPSLayer(8, 8, 8, heads=2, local="gatedgcn"),
    "mlp": lambda: L.MLPLayer(8, 8, 8),
    "appnp": lambda: L.APPNPLayer(8, 8, 8, K=3),
    "gcnii": lambda: L.GCNIILayer(8, 8, 8, num_convs=3),
    "grand": lambda: L.GRANDLayer(8, 8, 8, order=3),
    "mixhop": lambda: L.MixHopLayer(8, 6, 8),
}
MODELS = ("gcn", "gine", "gatedgcn", "gin", "gat", "gatv2", "sage", "monet", "gps", "mlp")
# a 6-node graph with a triangle, a tail and an isolated node 5
EDGES = torch.tensor([[0, 1, 1, 2, 2, 0, 2, 3, 3, 4], [1, 0, 2, 1, 0, 2, 3, 2, 4, 3]])


def test_every_registered_layer_is_checked() -> None:
    assert {type(make()).__name__ for make in LAYERS.values()} == set(L.__all__)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_permutation_equivariance(name: str) -> None:
    torch.manual_seed(0)
    layer = LAYERS[name]().eval()
    x, e = torch.randn(6, 8), torch.randn(EDGES.size(1), 8)
    perm = torch.tensor([3, 5, 0, 4, 2, 1])  # new node k is old node perm[k]
    inverse = torch.empty_like(perm)
    inverse[perm] = torch.arange(6)
    edge_order = torch.randperm(EDGES.size(1))
    out, e_out = layer(x, EDGES, e)
    out_p, e_out_p = layer(x[perm], inverse[EDGES][:, edge_order], e[edge_order])
    assert torch.allclose(out_p, out[perm], atol=1e-5)
    assert torch.allclose(e_out_p, e_out[edge_order], atol=1e-5)


PEPTIDES_FUNC = DatasetInfo("peptides-func", "graph", "multilabel", 10, "ap", True, FeatureSpec("atom"), FeatureSpec("bond"))


def two_molecules() -> Batch:
    g1 = Data(
        x=torch.tensor([[5, 0, 4, 5, 3, 0, 2, 0, 0], [5, 0, 3, 5, 0, 0, 1, 0, 1], [7, 0, 2, 5, 1, 0, 1, 0, 0]]),
        edge_index=torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]),
        edge_attr=torch.tensor([[0, 0, 0], [0, 0, 0], [1, 0, 1], [1, 0, 1]]),
    )
    g2 = Data(
        x=torch.tensor([[5, 0, 4, 5, 3, 0, 2, 0, 0], [6, 0, 2, 5, 1, 0, 2, 0, 0]]),
        edge_index=torch.tensor([[0, 1], [1, 0]]),
        edge_attr=torch.tensor([[0, 0, 0], [0, 0, 0]]),
    )
    return Batch.from_data_list([g1, g2])


@pytest.mark.parametrize("normalization", ["batchnorm", "graphnorm"])
@pytest.mark.parametrize("model", MODELS)
def test_model_forward_backward(compose_cfg: Callable[..., DictConfig], model: str, normalization: str) -> None:
    torch.manual_seed(0)
    cfg = compose_cfg([f"model={model}", f"normalization={normalization}", "model.num_layers=2"])
    net = network_builder(cfg, PEPTIDES_FUNC)(int(cfg.model.width_multiple) * 4)
    out = net(two_molecules())
    assert out.shape == (2, 10) and torch.isfinite(out).all()
    out.sum().backward()
    no_grad = [n for n, p in net.layers.named_parameters() if p.grad is None]
    assert not no_grad, f"{model}: layer parameters without gradient (unused?): {no_grad}"
