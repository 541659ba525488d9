"""GraphSAINT: induced subgraphs, and the normalization of Zeng et al. (2020) checked by Monte Carlo."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Data

from graphbench.data.samplers import SamplerContext, no_cache
from graphbench.data.samplers.saint import (
    CSCGraph,
    GraphSAINT,
    SaintBatches,
    SaintEdge,
    SaintNode,
    SaintRandomWalk,
    induced_edges,
)
from graphbench.modules.layers import SAGELayer
from tests.conftest import torch_threads

#: an irregular 7-node graph (both directions): a triangle 0-1-2, a tail 2-3-4, a hub 4-5, 4-6, 5-6
PAIRS = [(0, 1), (1, 2), (0, 2), (2, 3), (3, 4), (4, 5), (4, 6), (5, 6)]


def small_graph() -> Data:
    edge_index = torch.tensor(PAIRS).t()
    edge_index = torch.cat([edge_index, edge_index.flip(0)], dim=1)
    train = torch.tensor([True, True, False, True, False, True, True])
    x = torch.tensor([[1.0], [-2.0], [0.5], [3.0], [-1.0], [2.0], [4.0]])
    return Data(x=x, y=torch.arange(7) % 2, edge_index=edge_index, train_mask=train, num_nodes=7)


def test_induced_edges_are_exactly_the_edges_among_the_nodes() -> None:
    graph = small_graph()
    csc = CSCGraph.of(graph)
    nodes = torch.tensor([1, 2, 3, 5])
    source, target, position = induced_edges(csc, nodes)
    pairs = sorted(zip(nodes[source].tolist(), nodes[target].tolist()))
    assert pairs == [(1, 2), (2, 1), (2, 3), (3, 2)]
    assert torch.equal(csc.row[position], nodes[source]) and torch.equal(csc.col[position], nodes[target])


# 20,000 pre-sampled subgraphs: the estimated normalization is then within about 1% of the exact one
SAMPLERS = {
    "node": lambda: SaintNode(budget=3, presample_steps=20_000),
    "edge": lambda: SaintEdge(budget=2, presample_steps=20_000),
    "rw": lambda: SaintRandomWalk(budget=1, walk_length=2, presample_steps=20_000),
}


@pytest.fixture
def one_thread():  # type: ignore[no-untyped-def]
    """Thousands of tiny operations: one torch thread avoids a thread hand-off per operation."""
    with torch_threads(1):
        yield


@pytest.mark.parametrize("kind", sorted(SAMPLERS))
def test_normalized_aggregation_and_loss_are_unbiased(kind: str, one_thread: None) -> None:
    r"""Zeng et al., Prop. 3.1: given :math:`v \in V_s`, the mean over samples of
    :math:`\sum_{u \in N_s(v)} x_u / (\deg(v)\, \alpha_{u,v})` is the full-graph mean aggregation of
    :math:`v`; and the mean of :math:`\sum_{v \in V_s \cap V_{train}} w_v L_v` is the mean of
    :math:`L_v` over the training nodes. The Monte-Carlo samples are independent of the pre-sampled
    ones (other seeds); with 2,000 samples the means are within 7% (aggregation) and 3% (loss) here, and
    without the normalization the aggregation is off by 47-78% of the largest value."""
    graph = small_graph()
    sampler: GraphSAINT = SAMPLERS[kind]()
    loader = sampler.train_loader(graph, SamplerContext(0, no_cache))
    batches: SaintBatches = loader.collate_fn  # type: ignore[assignment]
    degree = CSCGraph.of(graph).in_degree.float()
    full = torch.zeros(7).index_add_(0, graph.edge_index[1], graph.x[graph.edge_index[0], 0]) / degree
    loss = torch.arange(1.0, 8.0)  # any per-node loss
    total, plain, times, loss_sum, samples = torch.zeros(7), torch.zeros(7), torch.zeros(7), 0.0, 2000
    for step in range(samples):
        batch = batches(1000 + step)  # other seeds than presampling's (presample_seed=0)
        source, target = batch.edge_index
        message = batch.x[source, 0] / degree[batch.n_id[target]]
        total.index_add_(0, batch.n_id, torch.zeros(batch.num_nodes).index_add_(0, target, message * batch.edge_weight))
        plain.index_add_(0, batch.n_id, torch.zeros(batch.num_nodes).index_add_(0, target, message))
        times[batch.n_id] += 1
        loss_sum += float((batch.loss_weight * loss[batch.n_id])[batch.train_mask].sum())
    assert (times > 0).all()
    scale = float(full.abs().max())
    assert float((total / times - full).abs().max()) < 0.15 * scale
    assert float((plain / times - full).abs().max()) > 0.4 * scale  # what the test would see without alpha
    assert loss_sum / samples == pytest.approx(float(loss[graph.train_mask].mean()), rel=0.06)


def test_layers_apply_the_aggregator_normalization(one_thread: None) -> None:
    r"""End to end through a layer that takes ``edge_weight``: SAGE with the sum aggregator (identity
    on the neighbours, no root term) computes :math:`\sum_{u \in N_s(v)} x_u / \alpha_{u,v}` on each
    GraphSAINT batch, whose mean over the batches containing :math:`v` is the full-graph sum (as in
    the test above); the same layer without the batch's weights is biased. Seeded: deterministic."""
    torch.manual_seed(0)
    graph = small_graph()
    layer = SAGELayer(1, 1, 1, aggr="sum")
    with torch.no_grad():
        layer.conv.lin_l.weight.fill_(1.0)
        layer.conv.lin_l.bias.zero_()
        layer.conv.lin_r.weight.zero_()
    batches: SaintBatches = SAMPLERS["rw"]().train_loader(graph, SamplerContext(0, no_cache)).collate_fn  # type: ignore[assignment]
    full = torch.zeros(7).index_add_(0, graph.edge_index[1], graph.x[graph.edge_index[0], 0])
    total, plain, times = torch.zeros(7), torch.zeros(7), torch.zeros(7)
    with torch.no_grad():
        for step in range(1000):
            batch = batches(1000 + step)  # other seeds than presampling's
            total.index_add_(0, batch.n_id, layer(batch.x, batch.edge_index, None, edge_weight=batch.edge_weight)[0][:, 0])
            plain.index_add_(0, batch.n_id, layer(batch.x, batch.edge_index, None)[0][:, 0])
            times[batch.n_id] += 1
    scale = float(full.abs().max())
    assert float((total / times - full).abs().max()) < 0.15 * scale
    assert float((plain / times - full).abs().max()) > 0.4 * scale


def test_same_seed_same_subgraphs() -> None:
    graph = small_graph()

    def epoch(seed: int) -> list[list[int]]:
        torch.manual_seed(seed)
        loader = SaintRandomWalk(budget=2, walk_length=2, num_steps=5, presample_steps=50).train_loader(
            graph, SamplerContext(0, no_cache)
        )
        return [batch.n_id.tolist() for batch in loader]

    assert epoch(0) == epoch(0)
    assert epoch(0) != epoch(1)


def test_presampling_is_cached_by_its_parameters() -> None:
    calls: list[tuple[str, tuple]] = []

    def cache(name: str, params: tuple, build):  # type: ignore[no-untyped-def]
        calls.append((name, params))
        return build()

    SaintEdge(budget=2, num_steps=1, presample_steps=10, presample_seed=3).train_loader(small_graph(), SamplerContext(0, cache))
    assert calls == [("saint", ("saint_edge", 2, 10, 50, 3))]


def test_the_loader_logs_the_subgraph_size_and_steps(caplog: pytest.LogCaptureFixture) -> None:
    """200 draws of the node sampler on 7 nodes take every node (with the default presample_seed): 7 nodes a
    subgraph, and num_steps=null makes the subgraphs add up to the graph: one step an epoch."""
    with caplog.at_level("INFO", logger="graphbench.data.samplers.saint"):
        SaintNode(budget=200, presample_steps=4).train_loader(small_graph(), SamplerContext(0, no_cache))
    assert caplog.messages == ["sampler=saint_node: subgraphs of 7 nodes on average (of 7; over 4 pre-sampled), 1 step an epoch"]
