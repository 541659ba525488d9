"""The sparse fast paths (graphbench.modules.propagation and the ``sparse=True`` layers) equal the
plain PyG / scatter paths: outputs, losses and gradients, on hand-built graphs and on real
Peptides-func batches (when ../shared/data exists)."""

from __future__ import annotations

import copy
from functools import partial

import numpy as np
import pytest
import torch
from torch import Tensor, nn
from torch_geometric.data import Batch, Data
from torch_geometric.nn.conv.gcn_conv import gcn_norm
from torch_geometric.utils import scatter

from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.modules.heads import MLPHead
from graphbench.modules.layers import GatedGCNLayer, GCNLayer, GINELayer
from graphbench.modules.network import GraphNetwork
from graphbench.modules.norms import NodeNorm
from graphbench.modules.pe_encoders import RWSEEncoder
from graphbench.modules.propagation import EdgePlan
from tests.conftest import real_data_root

#: 5 nodes: a directed edge 0 -> 1, both directions of 1 - 2, a self-loop at 2, a repeated edge
#: 3 -> 2 (twice), and node 4 isolated
EDGES = torch.tensor([[0, 1, 2, 2, 3, 3], [1, 2, 1, 2, 2, 2]])
NUM_NODES = 5
LAYERS = [GCNLayer, GINELayer, GatedGCNLayer]


def test_gather_and_scatter_values_and_gradients() -> None:
    torch.manual_seed(0)
    x = torch.randn(NUM_NODES, 3, dtype=torch.float64, requires_grad=True)
    m = torch.randn(EDGES.size(1), 3, dtype=torch.float64, requires_grad=True)
    plan = EdgePlan(EDGES, NUM_NODES)
    fast = (plan.gather_src(x), plan.gather_dst(x), plan.scatter_dst(m))
    plain = (x[EDGES[0]], x[EDGES[1]], scatter(m, EDGES[1], 0, dim_size=NUM_NODES, reduce="sum"))
    # node 2 receives from 1, from itself, and twice from 3
    assert torch.allclose(fast[2][2], m[1] + m[3] + m[4] + m[5])
    assert torch.equal(fast[2][4], torch.zeros(3, dtype=torch.float64))  # isolated: nothing arrives
    weights = [torch.randn_like(t) for t in fast]
    grads_fast = torch.autograd.grad(sum((w * t).sum() for w, t in zip(weights, fast)), (x, m))
    grads_plain = torch.autograd.grad(sum((w * t).sum() for w, t in zip(weights, plain)), (x, m))
    for a, b in zip(fast, plain):
        assert torch.allclose(a, b, atol=1e-12)
    for a, b in zip(grads_fast, grads_plain):
        assert torch.allclose(a, b, atol=1e-12)


def test_gcn_propagation_is_pygs_normalized_adjacency() -> None:
    torch.manual_seed(0)
    x = torch.randn(NUM_NODES, 2, dtype=torch.float64, requires_grad=True)
    index, weight = gcn_norm(EDGES, None, NUM_NODES, add_self_loops=True)
    dense = torch.zeros(NUM_NODES, NUM_NODES, dtype=torch.float64).index_put_(
        (index[1], index[0]), weight.double(), accumulate=True
    )
    out = EdgePlan(EDGES, NUM_NODES).gcn_propagate(x)
    assert torch.allclose(out, dense @ x, atol=1e-7)  # gcn_norm's weights are float32
    # the isolated node keeps only its self-loop of weight 1 / (1 + 0)
    assert torch.allclose(out[4], x[4])
    (grad,) = torch.autograd.grad((out * out).sum(), x)
    assert torch.allclose(grad, dense.T @ (2 * out), atol=1e-7)


def _layer_pair(layer: type[nn.Module], dim: int) -> tuple[nn.Module, nn.Module]:
    torch.manual_seed(0)
    fast = layer(in_dim=dim, out_dim=dim, edge_dim=dim)
    plain = copy.deepcopy(fast)
    plain.sparse = False
    return fast, plain


def _outputs_and_grads(module: nn.Module, x: Tensor, edge_attr: Tensor) -> list[Tensor]:
    x, edge_attr = x.clone().requires_grad_(), edge_attr.clone().requires_grad_()
    h, e = module(x, EDGES, edge_attr)
    loss = (h * torch.linspace(-1, 1, h.numel(), dtype=h.dtype).view_as(h)).sum() + (e.sin().sum() if e is not edge_attr else 0)
    params = [p for p in module.parameters() if p.requires_grad]
    grads = torch.autograd.grad(loss, [x, edge_attr, *params], allow_unused=True)
    return [h, e, *[g if g is not None else torch.zeros(1) for g in grads]]


@pytest.mark.parametrize("layer", LAYERS)
def test_sparse_layer_equals_plain_layer_on_a_tiny_graph(layer: type[nn.Module]) -> None:
    fast, plain = _layer_pair(layer, 4)
    fast.double(), plain.double()
    torch.manual_seed(1)
    x = torch.randn(NUM_NODES, 4, dtype=torch.float64)
    edge_attr = torch.randn(EDGES.size(1), 4, dtype=torch.float64)
    for a, b in zip(_outputs_and_grads(fast, x, edge_attr), _outputs_and_grads(plain, x, edge_attr)):
        assert a.shape == b.shape
        assert torch.allclose(a, b, atol=1e-6)  # gcn_norm computes its weights in float32


def test_sparse_gcn_layer_uses_a_plan_built_once() -> None:
    fast, _ = _layer_pair(GCNLayer, 3)
    plan = EdgePlan(EDGES, NUM_NODES)
    x = torch.randn(NUM_NODES, 3)
    first = fast(x, EDGES, None, plan=plan)[0]
    matrices = plan.gcn_adjacency
    second = fast(x, EDGES, None, plan=plan)[0]
    assert plan.gcn_adjacency is matrices  # the second layer reused the first one's normalization
    assert torch.equal(first, second)


def _network(layer: type[nn.Module], sparse: bool, layers: int, width: int) -> GraphNetwork:
    info = DatasetInfo("peptides", "graph", "multilabel", 10, "ap", True, FeatureSpec("atom"), FeatureSpec("bond"))
    return GraphNetwork(
        info=info,
        layer=partial(layer, sparse=sparse),
        head=partial(MLPHead, num_layers=3, activation="gelu"),
        norm=partial(NodeNorm, kind="batchnorm"),
        hidden_dim=width,
        num_layers=layers,
        dropout=0.1,
        activation="gelu",
        pe_encoder=partial(RWSEEncoder, k=4),
    )


def _peptide_batch(count: int) -> Batch:
    """``count`` real Peptides-func graphs spread over the file, graphbench-featurized, with RWSE."""
    from graphbench.data.sources.graph.peptides import read_peptides_csv
    from graphbench.data.sources.molecules import featurize_smiles
    from graphbench.transforms.rwse import RWSE

    smiles, labels = read_peptides_csv(
        real_data_root() / "peptides-functional" / "raw" / "peptide_multi_class_dataset.csv.gz", "labels"
    )
    pick = list(range(0, len(smiles), len(smiles) // count))[:count]  # spread over the file
    y = torch.tensor(np.asarray(labels, dtype=np.float32)[pick])
    data, slices = featurize_smiles([smiles[i] for i in pick], y, num_workers=1)
    graphs = []
    for i in range(count):
        n0, n1, e0, e1 = slices["x"][i], slices["x"][i + 1], slices["edge_index"][i], slices["edge_index"][i + 1]
        graphs.append(Data(x=data.x[n0:n1], edge_index=data.edge_index[:, e0:e1], edge_attr=data.edge_attr[e0:e1]))
    batch = Batch.from_data_list(RWSE(k=4).transform_many(graphs))
    batch.y = y
    return batch


def _train_losses_and_grads(net: nn.Module, batch: Batch, steps: int) -> tuple[list[float], list[Tensor]]:
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3)
    losses, grads = [], []
    for step in range(steps):
        torch.manual_seed(step)  # the same dropout masks for both networks
        optimizer.zero_grad()
        loss = nn.functional.binary_cross_entropy_with_logits(net(batch), batch.y)
        loss.backward()
        losses.append(float(loss.detach()))
        grads = [torch.zeros(0) if p.grad is None else p.grad.clone() for p in net.parameters()]  # the last edge update is unused
        optimizer.step()
    return losses, grads


@pytest.mark.parametrize("layer", LAYERS)
def test_sparse_network_trains_like_plain_network_on_real_peptides(layer: type[nn.Module]) -> None:
    batch = _peptide_batch(12)
    torch.manual_seed(0)
    fast = _network(layer, sparse=True, layers=3, width=16)
    plain = _network(layer, sparse=False, layers=3, width=16)
    plain.load_state_dict(fast.state_dict())
    fast_losses, fast_grads = _train_losses_and_grads(fast, batch, 3)
    plain_losses, plain_grads = _train_losses_and_grads(plain, batch, 3)
    assert fast_losses == pytest.approx(plain_losses, abs=1e-5)
    assert fast_losses[0] != fast_losses[-1]  # it trained
    for a, b in zip(fast_grads, plain_grads):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4)


def test_plan_inside_torch_func_transforms_equals_the_sparse_path() -> None:
    # the NTK callback differentiates the network under vmap/vjp, where CSR tensors cannot go
    from torch.func import vmap

    edge_index = torch.tensor([[0, 1, 1, 2, 3], [1, 0, 2, 1, 0]])
    plan = EdgePlan(edge_index, 4)
    x = torch.randn(4, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    for op in (plan.gcn_propagate, lambda v: plan.scatter_dst(plan.gather_src(v)), plan.gather_dst):
        torch.testing.assert_close(vmap(op)(x.unsqueeze(0))[0], op(x), rtol=0, atol=1e-12)


def test_gcn_propagation_under_vmap_is_one_csr_product_of_the_copies_side_by_side(monkeypatch: pytest.MonkeyPatch) -> None:
    # IGB's batched fits: K copies propagate on one graph; forward and backward are one CSR product each
    from torch.func import vmap

    from graphbench.modules import propagation

    calls: list[tuple[int, ...]] = []
    real_spmm = propagation.spmm

    def counted(matrix: Tensor, dense: Tensor) -> Tensor:
        calls.append(tuple(dense.shape))
        return real_spmm(matrix, dense)

    monkeypatch.setattr(propagation, "spmm", counted)
    plan = EdgePlan(EDGES, NUM_NODES)
    x = torch.randn(3, NUM_NODES, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0), requires_grad=True)
    weights = torch.randn(3, NUM_NODES, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    batched = vmap(plan.gcn_propagate)(x)
    (grad,) = torch.autograd.grad((batched * weights).sum(), x)
    assert calls == [(NUM_NODES, 6), (NUM_NODES, 6)]  # the three copies' 2 columns side by side
    index, weight = gcn_norm(EDGES, None, NUM_NODES, add_self_loops=True)
    dense = torch.zeros(NUM_NODES, NUM_NODES, dtype=torch.float64).index_put_(
        (index[1], index[0]), weight.double(), accumulate=True
    )
    for k in range(3):
        torch.testing.assert_close(batched[k], dense @ x[k].detach(), rtol=0, atol=1e-12)
        torch.testing.assert_close(grad[k], dense.t() @ weights[k], rtol=0, atol=1e-12)


def test_gcn_propagation_under_a_gradient_transform_inside_vmap_takes_no_csr_product() -> None:
    # the NTK callback's vmap over vjp: the gather path, whose gradients equal the dense matrix's
    from torch.func import vjp, vmap

    plan = EdgePlan(EDGES, NUM_NODES)
    x = torch.randn(NUM_NODES, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    cotangents = torch.randn(4, NUM_NODES, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    pullbacks = vmap(lambda v: vjp(plan.gcn_propagate, x)[1](v)[0])(cotangents)
    index, weight = gcn_norm(EDGES, None, NUM_NODES, add_self_loops=True)
    dense = torch.zeros(NUM_NODES, NUM_NODES, dtype=torch.float64).index_put_(
        (index[1], index[0]), weight.double(), accumulate=True
    )
    for k in range(4):
        torch.testing.assert_close(pullbacks[k], dense.t() @ cotangents[k], rtol=0, atol=1e-12)


@pytest.mark.parametrize("self_loop_weight", [1.0, 2.0])
def test_traceable_normalization_gives_pygs_products(self_loop_weight: float) -> None:
    # torch.compile's normalization (no data-dependent shapes) against PyG's gcn_norm: EDGES has a
    # self-loop at 2, which keeps its weight; the other nodes get self_loop_weight
    from graphbench.modules.propagation import traceable_gcn_norm

    weight = torch.tensor([0.5, 1.0, 2.0, 1.5, 3.0, 0.25], dtype=torch.float64)
    index, values = traceable_gcn_norm(EDGES, weight, NUM_NODES, self_loop_weight)
    pyg_index, pyg_values = gcn_norm(EDGES, weight, NUM_NODES, improved=self_loop_weight == 2.0, add_self_loops=True)

    def dense(i: Tensor, v: Tensor) -> Tensor:
        return torch.zeros(NUM_NODES, NUM_NODES, dtype=torch.float64).index_put_((i[1], i[0]), v, accumulate=True)

    torch.testing.assert_close(dense(index, values), dense(pyg_index, pyg_values), rtol=0, atol=1e-12)
    # node 4 is isolated: its row is its own loop alone, weight w / w = 1
    assert float(dense(index, values)[4, 4]) == pytest.approx(1.0, abs=1e-12)


def test_spmm_writes_exactly_what_sparse_mm_computes() -> None:
    # the product into an uninitialized result (addmm, beta=0) is torch.sparse.mm's, bit for bit
    from graphbench.modules.propagation import csr, spmm

    generator = torch.Generator().manual_seed(0)
    index = torch.randint(0, 50, (300,), generator=generator)
    matrix = csr(index, torch.arange(300), torch.rand(300, generator=generator), (60, 300))  # rows 50..59 empty
    for dtype in (torch.float32, torch.float64):
        dense = torch.randn(300, 7, dtype=dtype, generator=generator)
        typed = matrix.to(dtype)
        assert torch.equal(spmm(typed, dense), torch.sparse.mm(typed, dense))
        assert torch.equal(spmm(typed, dense.t().contiguous().t()), torch.sparse.mm(typed, dense))  # column-major
    # no edges, no features
    empty = csr(torch.zeros(0, dtype=torch.long), torch.zeros(0, dtype=torch.long), torch.zeros(0), (4, 0))
    assert torch.equal(spmm(empty, torch.zeros(0, 3)), torch.zeros(4, 3))
    assert spmm(matrix, torch.zeros(300, 0)).shape == (60, 0)
