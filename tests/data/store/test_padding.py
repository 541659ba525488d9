"""Padding graph batches to buckets: the padded batch's exact layout, bucket choice, the padding loader,
and a network that computes on a padded batch exactly what it computes on the batch itself (outputs,
loss, gradients, BatchNorm running statistics), on hand-built graphs."""

from __future__ import annotations

import copy
from functools import partial

import pytest
import torch
from torch import nn
from torch.nn import functional as F
from torch_geometric.data import Batch, Data

from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.data.store.device_store import DeviceStore
from graphbench.data.store.graph_store import GraphStore
from graphbench.data.store.loader import graph_loader
from graphbench.data.store.padding import Bucket, Buckets, choose_buckets, pad_batch, real_graphs
from graphbench.modules.heads import MLPHead
from graphbench.modules.layers import GatedGCNLayer, GCNLayer, GINELayer
from graphbench.modules.network import GraphNetwork
from graphbench.modules.norms import NodeNorm
from graphbench.modules.pe_encoders import RWSEEncoder
from graphbench.vocabulary.errors import DataError


def ring(n: int, label: float, seed: int) -> Data:
    """A ring of ``n`` nodes (both directions), random dense features and RWSE-like columns."""
    generator = torch.Generator().manual_seed(seed)
    src = torch.arange(n)
    dst = (src + 1) % n
    return Data(
        x=torch.randn(n, 3, generator=generator),
        edge_index=torch.stack([torch.cat([src, dst]), torch.cat([dst, src])]),
        edge_attr=torch.randn(2 * n, 2, generator=generator),
        rwse=torch.rand(n, 4, generator=generator),
        y=torch.tensor([[label]]),
    )


def three_rings() -> Batch:
    """Rings of 3, 4 and 5 nodes: 12 nodes, 24 edges."""
    return Batch.from_data_list([ring(3, 0.0, 0), ring(4, 1.0, 1), ring(5, 1.0, 2)])


def test_a_padded_batch_appends_a_dummy_graph_of_dummy_nodes_with_self_loops() -> None:
    batch = three_rings()
    padded = pad_batch(batch, Bucket(nodes=16, edges=28), graphs=5)
    assert padded.x.shape == (16, 3) and padded.rwse.shape == (16, 4) and padded.edge_attr.shape == (28, 2)
    assert torch.equal(padded.x[:12], batch.x) and torch.equal(padded.x[12:], torch.zeros(4, 3))
    assert torch.equal(padded.edge_index[:, :24], batch.edge_index)
    assert torch.equal(padded.edge_index[:, 24:], torch.full((2, 4), 12))  # self-loops on the first dummy node
    assert torch.equal(padded.edge_attr[24:], torch.zeros(4, 2))
    # graphs 3 (empty) and 4 (the dummy nodes) after the real ones
    assert padded.batch.tolist() == [0] * 3 + [1] * 4 + [2] * 5 + [4] * 4
    assert padded.ptr.tolist() == [0, 3, 7, 12, 12, 16] and padded.num_graphs == 5
    assert padded.node_mask.tolist() == [True] * 12 + [False] * 4
    assert padded.edge_mask.tolist() == [True] * 24 + [False] * 4
    # graph attributes keep the real graphs' rows only
    assert torch.equal(padded.y, batch.y) and padded.num_real_graphs == 3
    assert torch.equal(real_graphs(torch.arange(5), padded), torch.arange(3))
    assert torch.equal(real_graphs(torch.arange(3), batch), torch.arange(3))


def test_a_batch_must_leave_room_for_a_dummy_node_and_a_dummy_graph() -> None:
    batch = three_rings()
    with pytest.raises(DataError, match="does not fit"):
        pad_batch(batch, Bucket(nodes=12, edges=24), graphs=5)  # no room for a dummy node
    with pytest.raises(DataError, match="does not fit"):
        pad_batch(batch, Bucket(nodes=16, edges=28), graphs=3)  # no room for the dummy graph


def test_a_batch_takes_the_smallest_bucket_that_fits_it() -> None:
    buckets = Buckets((Bucket(8, 16), Bucket(16, 24), Bucket(32, 64)), graphs=5)
    assert buckets.fit(7, 16) == Bucket(8, 16)
    assert buckets.fit(8, 16) == Bucket(16, 24)  # 8 nodes leave no room for a dummy node
    assert buckets.fit(4, 17) == Bucket(16, 24)
    assert buckets.fit(31, 64) == Bucket(32, 64)
    with pytest.raises(DataError, match="fits none of the buckets"):
        buckets.fit(32, 10)


def test_buckets_are_quantiles_of_batch_totals_and_the_worst_case() -> None:
    # ten graphs of 10 nodes and 20 edges, and one of 100 nodes and 300 edges, outside the training split
    nodes = torch.tensor([10] * 10 + [100])
    edges = torch.tensor([20] * 10 + [300])
    buckets = choose_buckets(nodes, edges, train=torch.arange(10), batch_size=4)
    # every training batch of 4 holds 40 nodes and 80 edges: one bucket of 40 + 1 nodes (rounded to 48);
    # the worst case is the 4 largest graphs of the whole dataset, 130 + 1 nodes and 360 edges
    assert buckets == Buckets((Bucket(48, 80), Bucket(136, 360)), graphs=5)


def test_buckets_grow_are_the_same_every_time_and_fit_every_batch() -> None:
    generator = torch.Generator().manual_seed(0)
    nodes = torch.randint(5, 60, (200,), generator=generator)
    edges = 2 * nodes + torch.randint(0, 10, (200,), generator=generator)
    train = torch.arange(150)
    buckets = choose_buckets(nodes, edges, train, batch_size=16)
    assert buckets == choose_buckets(nodes, edges, train, batch_size=16)
    assert 2 <= len(buckets.sizes) <= 4 and buckets.graphs == 17
    for smaller, larger in zip(buckets.sizes, buckets.sizes[1:]):
        assert smaller.nodes <= larger.nodes and smaller.edges <= larger.edges and smaller != larger
    assert all(b.nodes % 8 == 0 and b.edges % 8 == 0 for b in buckets.sizes)
    for start in range(0, 200, 16):  # every batch of every split, in any order, fits
        ids = torch.arange(200)[start : start + 16]
        buckets.fit(int(nodes[ids].sum()), int(edges[ids].sum()))
    largest = nodes.topk(16).indices
    assert buckets.fit(int(nodes[largest].sum()), int(edges.topk(16).values.sum())) == buckets.sizes[-1]


def test_the_padding_loader_hands_out_padded_batches_of_the_same_graphs() -> None:
    graphs = [ring(n, float(n % 2), n) for n in (3, 4, 5, 6, 7)]
    store = GraphStore.from_list(graphs)
    buckets = Buckets((Bucket(8, 16), Bucket(24, 48)), graphs=3)
    plain = list(graph_loader(store, batch_size=2, shuffle=False))
    padded = list(graph_loader(store, batch_size=2, shuffle=False, buckets=buckets))
    assert [b.x.size(0) for b in padded] == [8, 24, 8]  # 7, 11 and 7 nodes
    assert all(b.num_graphs == 3 for b in padded)
    for p, b in zip(padded, plain):
        assert torch.equal(p.x[: b.num_nodes], b.x) and torch.equal(p.y, b.y) and p.num_real_graphs == b.num_graphs
    # ids only: the batches are padded where they are gathered, from the dataset's copy on the device
    on_device = DeviceStore(store, torch.device("cpu"))
    for ids, p in zip(graph_loader(store, batch_size=2, shuffle=False, ids_only=True, buckets=buckets), padded):
        assert ids.buckets == buckets
        gathered = on_device.batch(ids.ids, ids.buckets)
        assert gathered.num_real_graphs == p.num_real_graphs and gathered.num_graphs == 3
        for key in ("x", "edge_index", "edge_attr", "rwse", "y", "batch", "ptr", "node_mask", "edge_mask"):
            assert torch.equal(gathered[key], p[key]), key


def network(layer: type[nn.Module], norm: str) -> GraphNetwork:
    torch.manual_seed(0)
    info = DatasetInfo("rings", "graph", "binary", 1, "ap", True, FeatureSpec("dense", 3), FeatureSpec("dense", 2))
    return GraphNetwork(
        info=info,
        layer=layer,
        head=partial(MLPHead, num_layers=2),
        norm=partial(NodeNorm, kind=norm),
        hidden_dim=8,
        num_layers=2,
        pe_encoder=partial(RWSEEncoder, k=4, concat_dim=3),
    )


@pytest.mark.parametrize("norm", ["batchnorm", "graphnorm", "layernorm", "none"])
@pytest.mark.parametrize("layer", [GCNLayer, GINELayer, GatedGCNLayer])
def test_a_network_computes_on_a_padded_batch_what_it_computes_on_the_batch(layer: type[nn.Module], norm: str) -> None:
    batch = three_rings()
    padded = pad_batch(batch, Bucket(nodes=24, edges=40), graphs=6)
    plain, twin = network(layer, norm), network(layer, norm)
    for _ in range(2):  # two training steps: the second one starts from the first's running statistics
        loss = F.binary_cross_entropy_with_logits(plain(batch), batch.y)
        padded_loss = F.binary_cross_entropy_with_logits(real_graphs(twin(padded), padded), padded.y)
        torch.testing.assert_close(padded_loss, loss, rtol=1e-5, atol=1e-6)
        loss.backward()
        padded_loss.backward()
        for (name, p), q in zip(plain.named_parameters(), twin.parameters()):
            torch.testing.assert_close(q.grad, p.grad, rtol=1e-4, atol=1e-6, msg=name)
    for name, buffer in plain.named_buffers():  # BatchNorm's running mean, variance and batch count
        torch.testing.assert_close(dict(twin.named_buffers())[name], buffer, rtol=1e-5, atol=1e-6, msg=name)
    plain.eval(), twin.eval()
    torch.testing.assert_close(real_graphs(twin(padded), padded), plain(batch), rtol=1e-5, atol=1e-6)


def test_a_padded_batch_trains_a_copy_of_the_network_to_the_same_weights() -> None:
    batch = three_rings()
    padded = pad_batch(batch, Bucket(nodes=16, edges=32), graphs=4)
    plain = network(GatedGCNLayer, "batchnorm")
    twin = copy.deepcopy(plain)
    for model, data in ((plain, batch), (twin, padded)):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # Adam would magnify float noise in ~0 gradients
        for _ in range(3):
            optimizer.zero_grad()
            F.binary_cross_entropy_with_logits(real_graphs(model(data), data), data.y).backward()
            optimizer.step()
    for (name, p), q in zip(plain.state_dict().items(), twin.state_dict().values()):
        torch.testing.assert_close(q, p, rtol=1e-4, atol=1e-5, msg=name)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_batch_padded_on_cuda_equals_the_batch_padded_on_the_cpu() -> None:
    batch = three_rings()
    on_cpu = pad_batch(batch, Bucket(nodes=16, edges=28), graphs=5)
    on_cuda = pad_batch(batch.to("cuda"), Bucket(nodes=16, edges=28), graphs=5)
    for key in ("x", "edge_index", "edge_attr", "rwse", "y", "batch", "ptr", "node_mask", "edge_mask"):
        assert on_cuda[key].is_cuda and torch.equal(on_cuda[key].cpu(), on_cpu[key]), key
