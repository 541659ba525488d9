"""graphbench.speedups.seam: ``apply`` swaps the kernels into a plain network without changing its
parameters or losses (``speedups=off`` trains as ``auto``); ``run_scope`` patches Lightning for the
block only; ``compile_network`` trains with eager's losses and keeps checkpoints loadable."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
import torch
from lightning.pytorch.trainer.connectors.logger_connector.result import _ResultMetric
from torch import Tensor, nn
from torch.nn import functional as F
from torch_geometric.data import Batch, Data
from torch_geometric.nn.dense.linear import Linear as PyGLinear

from graphbench import speedups
from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.modules.heads import MLPHead
from graphbench.modules.layers import GCNLayer, GINELayer
from graphbench.modules.network import GraphNetwork
from graphbench.modules.norms import NodeNorm
from graphbench.speedups import cpu_bernoulli, result_moves
from graphbench.speedups import dropout as dropout_module
from graphbench.speedups.dropout import Dropout
from graphbench.speedups.linear import Linear, OneDnnPyGLinear
from graphbench.speedups.quiet_profiler import QuietProfiler

CONF = Path(__file__).resolve().parents[2] / "conf"


def _network(layer: type[nn.Module], dropout: float) -> GraphNetwork:
    torch.manual_seed(0)
    info = DatasetInfo("toy", "graph", "binary", 1, "ap", True, FeatureSpec("dense", 3), FeatureSpec("dense", 2))
    return GraphNetwork(
        info=info,
        layer=layer,
        head=partial(MLPHead, num_layers=2, activation="relu", dropout=dropout),
        norm=partial(NodeNorm, kind="batchnorm"),
        hidden_dim=8,
        num_layers=2,
        dropout=dropout,
    )


def _batch(step: int) -> Batch:
    """Three rings of 4 + step, 5 + step and 6 + step nodes: sizes change every step, as graph batches do."""
    generator = torch.Generator().manual_seed(step)
    graphs = []
    for k in range(3):
        n = 4 + step + k
        src = torch.arange(n)
        dst = (src + 1) % n
        edge_index = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])
        x, edge_attr = torch.randn(n, 3, generator=generator), torch.randn(2 * n, 2, generator=generator)
        graphs.append(Data(x=x, edge_index=edge_index, edge_attr=edge_attr, y=torch.tensor([[float(k % 2)]])))
    return Batch.from_data_list(graphs)


def _losses(network: nn.Module, steps: int) -> list[Tensor]:
    optimizer = torch.optim.AdamW(network.parameters(), lr=1e-2)
    losses = []
    for step in range(steps):
        batch = _batch(step)
        torch.manual_seed(100 + step)  # the dropout masks of this step
        optimizer.zero_grad()
        loss = F.binary_cross_entropy_with_logits(network(batch), batch.y)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return losses


def test_the_config_group_names_every_choice() -> None:
    assert sorted(path.stem for path in (CONF / "speedups").glob("*.yaml")) == sorted(speedups.CHOICES)


def test_apply_swaps_exact_classes_and_keeps_parameters_and_their_names() -> None:
    plain = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), PyGLinear(4, 2), nn.MultiheadAttention(4, 2))
    names = list(plain.state_dict())
    weight = plain[0].weight
    fast = speedups.apply(plain)
    assert fast is plain
    assert [type(m) for m in fast[:3]] == [Linear, Dropout, OneDnnPyGLinear]
    assert type(fast[3].out_proj) is nn.modules.linear.NonDynamicallyQuantizableLinear  # a subclass: left alone
    assert list(fast.state_dict()) == names
    assert fast[0].weight is weight


@pytest.mark.skipif(not cpu_bernoulli.available(), reason="this torch build draws masks differently")
@pytest.mark.parametrize("layer", [GCNLayer, GINELayer])
def test_speedups_off_trains_with_the_same_losses(layer: type[nn.Module], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dropout_module, "MIN_ELEMENTS", 0)  # this small network's dropouts take the compiled mask
    draws: list[int] = []
    draw = cpu_bernoulli.draw
    monkeypatch.setattr(cpu_bernoulli, "draw", lambda n, p: draws.append(n) or draw(n, p))
    fast = _losses(speedups.apply(_network(layer, dropout=0.2)), steps=3)
    assert draws, "the compiled dropout kernel never ran"
    plain = _losses(_network(layer, dropout=0.2), steps=3)
    torch.testing.assert_close(fast, plain, rtol=1e-5, atol=1e-6)
    assert fast[0] != fast[-1]  # it trained


def test_run_scope_patches_lightning_for_the_block_only() -> None:
    lightnings_own = _ResultMetric.to
    with speedups.run_scope(True):
        assert _ResultMetric.to is result_moves._to_unless_there
    assert _ResultMetric.to is lightnings_own
    with speedups.run_scope(False):
        assert _ResultMetric.to is lightnings_own


def test_the_profiler_is_quiet_only_when_enabled() -> None:
    assert isinstance(speedups.profiler(True), QuietProfiler)
    assert speedups.profiler(False) is None


def test_a_compiled_network_trains_as_eager_and_its_checkpoint_loads_into_an_eager_one() -> None:
    """Without dropout (Inductor draws its own masks); with the kernels applied, which step aside."""
    eager = _losses(_network(GCNLayer, dropout=0.0), steps=3)
    compiled_network = speedups.compile_network(speedups.apply(_network(GCNLayer, dropout=0.0)))
    compiled = _losses(compiled_network, steps=3)
    torch.testing.assert_close(compiled, eager, rtol=1e-5, atol=1e-6)
    state = compiled_network.state_dict()
    assert not any(key.startswith("_orig_mod.") for key in state)
    fresh = _network(GCNLayer, dropout=0.0)
    fresh.load_state_dict(state)
    assert all(torch.equal(a, b) for a, b in zip(fresh.state_dict().values(), state.values()))


@pytest.mark.parametrize("mode", ["default", "reduce-overhead"])
def test_a_network_compiled_for_static_shapes_trains_on_padded_batches_as_eager(mode: str) -> None:
    """Batches padded to one bucket (graphbench.data.store.padding): one graph, compiled without a break
    (fullgraph=True), for three steps of three batch sizes; ``reduce-overhead`` copies the output out of
    the replayed graph (on the CPU no CUDA graph is recorded)."""
    from torch._dynamo.utils import counters

    from graphbench.data.store.padding import Bucket, pad_batch, real_graphs

    eager = _losses(_network(GCNLayer, dropout=0.0), steps=3)
    network = speedups.compile_network(_network(GCNLayer, dropout=0.0), static_shapes=True, mode=mode)
    optimizer = torch.optim.AdamW(network.parameters(), lr=1e-2)
    torch._dynamo.reset()
    counters.clear()
    losses = []
    for step in range(3):  # 15, 18 and 21 nodes, all padded to 24 nodes and 48 edges
        batch = pad_batch(_batch(step), Bucket(nodes=24, edges=48), graphs=4)
        optimizer.zero_grad()
        loss = F.binary_cross_entropy_with_logits(real_graphs(network(batch), batch), batch.y)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    torch.testing.assert_close(losses, eager, rtol=1e-5, atol=1e-6)
    assert counters["stats"]["unique_graphs"] == 1 and not counters["graph_break"]


def test_compile_network_names_the_valid_modes() -> None:
    with pytest.raises(ValueError, match=r"^mode='fast' is not one of \['default', 'reduce-overhead', "):
        speedups.compile_network(_network(GCNLayer, dropout=0.0), mode="fast")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_graphs_of_a_network_compiled_for_static_shapes_train_as_eager() -> None:
    """``reduce-overhead`` on a GPU: each step replays the recorded CUDA graphs; the outputs handed out are
    copies, still intact after later replays (the metrics keep them)."""
    from graphbench.data.store.padding import Bucket, pad_batch, real_graphs

    def steps(network: nn.Module, pad: bool) -> tuple[list[Tensor], list[Tensor]]:
        optimizer = torch.optim.AdamW(network.parameters(), lr=1e-2)
        losses, outputs = [], []
        for step in range(4):
            batch = _batch(step % 2).to("cuda")
            if pad:
                batch = pad_batch(batch, Bucket(nodes=24, edges=48), graphs=4)
            optimizer.zero_grad()
            out = real_graphs(network(batch), batch)
            loss = F.binary_cross_entropy_with_logits(out, batch.y)
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
            outputs.append(out.detach())
        return losses, outputs

    eager = steps(_network(GCNLayer, dropout=0.0).cuda(), pad=False)
    network = speedups.compile_network(_network(GCNLayer, dropout=0.0).cuda(), static_shapes=True, mode="reduce-overhead")
    replayed = steps(network, pad=True)
    torch.testing.assert_close(replayed[0], eager[0], rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(replayed[1], eager[1], rtol=1e-4, atol=1e-5)
