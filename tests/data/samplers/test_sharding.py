"""The node-level samplers in a data-parallel run: each rank trains on its own part of the seed nodes,
METIS parts or GraphSAINT subgraphs, with equal step counts, and evaluates an unpadded share."""

from __future__ import annotations

import torch
from torch_geometric.data import Data

from graphbench.data.samplers import ClusterGCN, NeighborSampling, SamplerContext, no_cache
from graphbench.data.samplers.saint import SaintRandomWalk, StepSeeds
from graphbench.data.store.sharding import Shard


def ring(num_nodes: int = 12) -> Data:
    """A ring, both directions; nodes 0..8 train, 9..11 test; feature = node id."""
    source = torch.arange(num_nodes)
    target = (source + 1) % num_nodes
    edge_index = torch.stack([torch.cat([source, target]), torch.cat([target, source])])
    train = torch.arange(num_nodes) < 9
    return Data(
        x=torch.arange(num_nodes, dtype=torch.float).view(-1, 1), edge_index=edge_index, train_mask=train, test_mask=~train
    )


def context(rank: int, world_size: int) -> SamplerContext:
    return SamplerContext(0, no_cache, Shard(rank, world_size), seed=7)


def test_eval_shares_hold_every_split_node_once() -> None:
    graph = ring(13)
    graph.test_mask = torch.arange(13) >= 6  # 7 test nodes: shares of 3 and 4
    shares = [context(rank, 2).eval_nodes(graph, "test").tolist() for rank in range(2)]
    assert shares == [[6, 7, 8], [9, 10, 11, 12]]
    assert SamplerContext(0, no_cache).eval_nodes(graph, "test").tolist() == list(range(6, 13))


def test_neighbor_seeds_are_split_over_ranks_with_equal_steps() -> None:
    graph = ring()
    sampler = NeighborSampling(num_neighbors=[2], batch_size=2)
    seeds = []
    for rank in range(2):
        batches = list(sampler.train_loader(graph, context(rank, 2)))
        assert len(batches) == 3  # 9 seeds padded to 10, 5 per rank, batches of 2
        seeds.append([s for b in batches for s in b.n_id[: b.batch_size].tolist()])
    assert len(seeds[0]) == len(seeds[1]) == 5
    assert sorted(set(seeds[0]) | set(seeds[1])) == list(range(9))  # every training node in the epoch
    assert len(set(seeds[0]) & set(seeds[1])) == 1  # the one padding repeat


def test_cluster_parts_are_split_over_ranks() -> None:
    graph = ring()
    sampler = ClusterGCN(num_parts=4, parts_per_batch=1)
    nodes = [
        sorted(s for b in sampler.train_loader(graph, context(rank, 2)) for s in b.x.view(-1).long().tolist())
        for rank in range(2)
    ]
    assert not set(nodes[0]) & set(nodes[1])
    assert sorted(nodes[0] + nodes[1]) == list(range(12))  # the 4 parts, 2 per rank


def test_saint_ranks_draw_different_subgraphs_and_the_same_number_of_them() -> None:
    def draw(num_steps: int, shard: Shard | None) -> list[int]:
        torch.manual_seed(0)  # the same global seed on every rank, as seed_everything gives them
        return list(StepSeeds(num_steps, shard))

    seeds = [draw(5, Shard(rank, 2)) for rank in range(2)]
    assert draw(6, None) == [seed for pair in zip(*seeds) for seed in pair]  # rank r takes positions r, r + 2, ...
    assert [len(s) for s in seeds] == [3, 3] and not set(seeds[0]) & set(seeds[1])

    sampler = SaintRandomWalk(budget=2, walk_length=2, num_steps=4, presample_steps=20)
    subgraphs = []
    for rank in range(2):
        torch.manual_seed(0)
        subgraphs.append([b.n_id.tolist() for b in sampler.train_loader(ring(), context(rank, 2))])
    assert len(subgraphs[0]) == len(subgraphs[1]) == 2
    assert subgraphs[0] != subgraphs[1]
