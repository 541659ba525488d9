"""graphbench's networks of the LRGB-tuned Peptides-func recipes (sparse fast paths, in-place message
buffers) compute the maths of the plain-PyG reference of ``benchmarks/reference.py`` (toenshoff/LRGB's
model: ``GCNConv``, ``GINEConv``, a ``MessagePassing`` GatedGCN, ``BatchNorm1d``, ``global_mean_pool``):
with the same initial weights (copied by the benchmark's name map), the same batch and the same dropout
masks, the losses of three AdamW steps and every parameter's gradient agree up to float summation order,
on real Peptides-func graphs, the recipes narrowed to width 16 (RWSE of 4 steps to 4 channels), 3 layers."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch_geometric.data import Data

from benchmarks.reference import ReferenceNet, copy_weights, reference_name, train_rounds
from graphbench.build.model import network_builder
from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.modules.layers import GatedGCNLayer, GCNLayer, GINELayer
from tests.modules.test_propagation import _peptide_batch
from tests.recipes._source import composed

LAYERS = {"gcn": GCNLayer, "gine": GINELayer, "gatedgcn": GatedGCNLayer}
WIDTH, DEPTH, K, DIM_PE = 16, 3, 4, 4
INFO = DatasetInfo("peptides-func", "graph", "multilabel", 10, "ap", True, FeatureSpec("atom"), FeatureSpec("bond"))


def _recipe_network(kind: str) -> nn.Module:
    """``experiment=lrgb-tuned/peptides-func-<kind>`` at the test's width, depth and RWSE size."""
    cfg = composed(
        f"experiment=lrgb-tuned/peptides-func-{kind}",
        f"model.hidden_dim={WIDTH}",
        f"model.num_layers={DEPTH}",
        f"pe.k={K}",
        f"pe.concat_dim={DIM_PE}",
        "speedups=off",
    )
    network = network_builder(cfg, INFO)(WIDTH)
    assert all(isinstance(layer, LAYERS[kind]) and layer.sparse for layer in network.layers)
    return network


def _steps(net: nn.Module, batch, steps: int) -> tuple[list[float], dict[str, torch.Tensor]]:
    """Losses of ``steps`` AdamW steps (dropout masks fixed by reseeding) and the last step's gradients."""
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=0.0)
    net.train()
    losses: list[float] = []
    grads: dict[str, torch.Tensor] = {}
    for step in range(steps):
        torch.manual_seed(step)
        optimizer.zero_grad()
        loss = nn.functional.binary_cross_entropy_with_logits(net(batch), batch.y)
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        losses.append(float(loss.detach()))
        grads = {name: p.grad.clone() for name, p in net.named_parameters() if p.grad is not None}
        optimizer.step()
    return losses, grads


@pytest.mark.parametrize("kind", list(LAYERS))
def test_graphbench_network_trains_like_the_plain_pyg_reference(kind: str) -> None:
    batch = _peptide_batch(12)
    torch.manual_seed(0)
    ours = _recipe_network(kind)
    reference = ReferenceNet(kind, WIDTH, DEPTH, K, 10, dropout=0.1, dim_pe=DIM_PE)
    copy_weights(ours, reference)
    our_losses, our_grads = _steps(ours, batch, 3)
    reference_losses, reference_grads = _steps(reference, batch, 3)
    assert our_losses == pytest.approx(reference_losses, abs=1e-5)
    assert our_losses[0] != our_losses[-1]  # it trained
    # the same parameters received gradients (GatedGCN's last edge update feeds nothing, on both sides)
    assert {reference_name(name) for name in our_grads} == set(reference_grads)
    for name, grad in our_grads.items():
        torch.testing.assert_close(grad, reference_grads[reference_name(name)], atol=1e-5, rtol=1e-4)


class _Logistic(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(2, 1)

    def forward(self, data: Data) -> torch.Tensor:
        return self.lin(data.x).squeeze(-1)


def test_every_timed_round_trains_from_the_same_weights() -> None:
    """The rounds compare losses step by step, so each must start from the weights given, not from
    the previous round's trained ones (``state_dict()`` alone returns the live tensors)."""
    torch.manual_seed(0)
    models = {"a": _Logistic(), "b": _Logistic()}
    batches = [Data(x=torch.randn(4, 2), y=torch.tensor([0.0, 1.0, 1.0, 0.0])) for _ in range(3)]
    times, losses = train_rounds(models, batches, repeats=3)
    assert {name: len(seconds) for name, seconds in times.items()} == {"a": 3, "b": 3}
    for rounds in losses.values():
        assert rounds[0][0] != rounds[0][-1]  # it trained
        assert rounds[1] == rounds[0] and rounds[2] == rounds[0]
