"""graphbench.data.samplers.neighbor_loader: the pure-torch neighbor sampler behind PyG's NeighborLoader
(segment helpers, uniform choice, exact fan-outs) and node_neighbor_loader, on hand-built graphs."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Data

from graphbench.data.samplers.context import SamplerContext, no_cache
from graphbench.data.samplers.neighbor_loader import (
    TorchNeighborSampler,
    choose_neighbors,
    has_native_sampler,
    node_neighbor_loader,
    sample_neighbors,
    segment_arange,
    segment_ids,
)
from graphbench.data.samplers.saint import CSCGraph


def path_graph() -> Data:
    """0 - 1 - 2 - 3, both directions."""
    edge_index = torch.tensor([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]])
    return Data(edge_index=edge_index, num_nodes=4)


def random_graph(num_nodes: int = 40, num_edges: int = 160, seed: int = 0) -> Data:
    generator = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(num_nodes, (2, num_edges), generator=generator)
    edge_index = torch.cat([edge_index, edge_index.flip(0)], dim=1)
    train = torch.zeros(num_nodes, dtype=torch.bool)
    train[::2] = True
    return Data(
        x=torch.arange(num_nodes, dtype=torch.float).view(-1, 1),
        y=torch.arange(num_nodes) % 3,
        edge_index=edge_index,
        train_mask=train,
        val_mask=~train,
        num_nodes=num_nodes,
    )


def test_segment_helpers() -> None:
    counts = torch.tensor([2, 0, 3, 1])
    assert segment_ids(counts).tolist() == [0, 0, 2, 2, 2, 3]
    assert segment_arange(counts).tolist() == [0, 1, 0, 1, 2, 0]
    assert segment_ids(torch.tensor([0, 0])).tolist() == []


def test_full_fanout_on_a_path_is_exact() -> None:
    csc = CSCGraph.of(path_graph())
    out = sample_neighbors(csc.colptr, csc.row, torch.tensor([1]), [-1, -1])
    # hop 1: the in-neighbours of 1 (0, 2); hop 2: those of 0 (1) and of 2 (1, 3): 3 is new
    assert out.node.tolist() == [1, 0, 2, 3]
    assert out.num_sampled_nodes == [1, 2, 1]
    assert out.num_sampled_edges == [2, 3]
    edges = list(zip(out.node[out.row].tolist(), out.node[out.col].tolist()))
    assert edges == [(0, 1), (2, 1), (1, 0), (1, 2), (3, 2)]


def check_batch(graph: Data, csc: CSCGraph, seed: torch.Tensor, fanouts: list[int], replace: bool = False) -> None:
    out = sample_neighbors(csc.colptr, csc.row, seed, fanouts, replace)
    assert out.node[: seed.numel()].tolist() == seed.tolist()  # seeds first, in order
    assert out.node.unique().numel() == out.node.numel()
    # every sampled edge exists, at the CSC position it names
    source, target = out.node[out.row], out.node[out.col]
    assert torch.equal(csc.row[out.edge], source)
    assert torch.equal(csc.col[out.edge], target)
    existing = set(zip(*graph.edge_index.tolist()))
    assert set(zip(source.tolist(), target.tolist())) <= existing
    # fan-outs: hop l gives each node added at hop l - 1 min(k, degree) distinct in-edges (k with replacement)
    degree = csc.in_degree
    first_node, first_edge = 0, 0
    for hop, k in enumerate(fanouts):
        frontier = torch.arange(first_node, first_node + out.num_sampled_nodes[hop])
        edges = slice(first_edge, first_edge + out.num_sampled_edges[hop])
        per_node = torch.bincount(out.col[edges] - first_node, minlength=frontier.numel())
        d = degree[out.node[frontier]]
        expected = torch.where(d > 0, torch.full_like(d, k), 0) if replace else torch.minimum(d, torch.full_like(d, k))
        assert torch.equal(per_node, expected)
        if not replace:
            assert out.edge[edges].unique().numel() == out.edge[edges].numel()
        first_node += out.num_sampled_nodes[hop]
        first_edge += out.num_sampled_edges[hop]


@pytest.mark.parametrize("replace", [False, True])
def test_sampled_edges_exist_and_fanouts_hold(replace: bool) -> None:
    graph = random_graph()
    csc = CSCGraph.of(graph)
    torch.manual_seed(3)
    for seed in (torch.tensor([5, 0, 17]), torch.tensor([39]), torch.arange(0, 40, 4).flip(0)):
        check_batch(graph, csc, seed, [3, 2, 1], replace)


def test_choose_neighbors_is_a_uniform_subset() -> None:
    # one node with 4 in-edges, k = 2: each of the 6 pairs is drawn with probability 1/6
    generator = torch.Generator().manual_seed(0)
    counts: dict[tuple[int, ...], int] = {}
    for _ in range(3000):
        _, position = choose_neighbors(torch.tensor([10]), torch.tensor([4]), 2, False, generator)
        key = tuple(sorted(position.tolist()))
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 6
    assert all(abs(c / 3000 - 1 / 6) < 0.03 for c in counts.values())


def test_loader_batches_seeds_first_with_seed_masks_and_is_deterministic() -> None:
    graph = random_graph()
    train_nodes = graph.train_mask.nonzero().view(-1)

    def epoch(seed: int) -> list[tuple[list[int], list[list[int]]]]:
        torch.manual_seed(seed)
        loader = node_neighbor_loader(graph, "train", train_nodes, [3, 2], 6, SamplerContext(0, no_cache), shuffle=True)
        return [(batch.n_id.tolist(), batch.edge_index.tolist()) for batch in loader]

    torch.manual_seed(0)
    loader = node_neighbor_loader(graph, "train", train_nodes, [3, 2], 6, SamplerContext(0, no_cache), shuffle=True)
    seeds = []
    for batch in loader:
        size = batch.batch_size
        assert torch.equal(batch.n_id[:size], graph.train_mask.nonzero().view(-1)[batch.input_id])
        assert batch.train_mask[:size].all() and not batch.train_mask[size:].any()  # the loss counts the seeds only
        assert torch.equal(batch.x.view(-1).long(), batch.n_id)  # node features travel with the nodes
        seeds += batch.n_id[:size].tolist()
    assert sorted(seeds) == graph.train_mask.nonzero().view(-1).tolist()  # every training node once an epoch
    assert epoch(1) == epoch(1)
    assert epoch(1) != epoch(2)


def test_native_and_pure_torch_batches_have_the_same_structure() -> None:
    if not has_native_sampler():
        pytest.skip("pyg-lib and torch-sparse are not installed: there is no native PyG neighbor sampler to compare with")
    graph = random_graph()
    seed = torch.tensor([4, 9, 1])
    native = TorchNeighborSampler(graph, [-1, -1], native=True)._sample(seed)
    torch_path = TorchNeighborSampler(graph, [-1, -1], native=False)._sample(seed)
    # with every neighbour taken, both sample the same nodes (seeds first) and the same edges
    assert native.node[:3].tolist() == torch_path.node[:3].tolist() == seed.tolist()
    assert set(native.node.tolist()) == set(torch_path.node.tolist())
    assert native.num_sampled_nodes == torch_path.num_sampled_nodes
    as_pairs = lambda out: set(zip(out.node[out.row].tolist(), out.node[out.col].tolist()))  # noqa: E731
    assert as_pairs(native) == as_pairs(torch_path)
