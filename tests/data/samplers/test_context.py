"""graphbench.data.samplers.context: what a sampler is handed (SamplerContext), the seed mask of a sampled
batch and the argument checks every sampler shares."""

from __future__ import annotations

import re

import pytest
import torch
from omegaconf import OmegaConf
from torch.utils.data import DistributedSampler
from torch_geometric.data import Data

from graphbench.data.samplers.context import SamplerContext, SeedMask, fanouts, no_cache, positive_int
from graphbench.data.store.sharding import Shard
from graphbench.vocabulary.errors import ConfigError


def test_one_process_shuffles_and_evaluates_every_split_node() -> None:
    context = SamplerContext(0, no_cache)
    assert not context.distributed
    assert context.train_order(5) == {"shuffle": True}
    graph = Data(val_mask=torch.tensor([False, True, True, False, True]), num_nodes=5)
    assert context.eval_nodes(graph, "val").tolist() == [1, 2, 4]


def test_a_world_of_one_is_not_distributed() -> None:
    assert not SamplerContext(0, no_cache, Shard(0, 1)).distributed
    assert SamplerContext(0, no_cache, Shard(0, 1)).train_order(3) == {"shuffle": True}


def test_each_rank_takes_its_padded_part_of_one_shared_permutation() -> None:
    parts = []
    for rank in range(2):
        order = SamplerContext(0, no_cache, Shard(rank, 2), seed=3).train_order(5)
        assert order["shuffle"] is False  # the sampler orders the items
        sampler = order["sampler"]
        assert isinstance(sampler, DistributedSampler)
        parts.append(list(sampler))
    assert len(parts[0]) == len(parts[1]) == 3  # 5 items padded to 6
    assert sorted(set(parts[0]) | set(parts[1])) == [0, 1, 2, 3, 4]


def test_no_cache_builds_every_time() -> None:
    calls = []
    assert no_cache("parts", (1, 2), lambda: calls.append(1) or len(calls)) == 1
    assert no_cache("parts", (1, 2), lambda: calls.append(1) or len(calls)) == 2


def test_the_seed_mask_marks_the_seeds_only() -> None:
    batch = Data(edge_index=torch.tensor([[1, 2, 3], [0, 0, 1]]), num_nodes=4, batch_size=2)
    batch.train_mask = torch.ones(4, dtype=torch.bool)  # a labelled neighbour must not count
    out = SeedMask("train")(batch)
    assert out.train_mask.tolist() == [True, True, False, False]
    assert SeedMask("val")(Data(edge_index=torch.empty(2, 0, dtype=torch.long), num_nodes=3, batch_size=1)).val_mask.tolist() == [
        True,
        False,
        False,
    ]


def test_positive_int() -> None:
    assert positive_int(3, "batch_size") == 3
    for bad in (0, -1, True, 2.0, "4"):
        with pytest.raises(ConfigError, match=rf"^batch_size={re.escape(repr(bad))} must be a positive integer$"):
            positive_int(bad, "batch_size")


def test_fanouts_take_positive_integers_or_minus_one_from_lists_tuples_and_yaml() -> None:
    assert fanouts([10, -1], "num_neighbors") == [10, -1]
    assert fanouts((5,), "num_neighbors") == [5]
    assert fanouts(OmegaConf.create([3, 2]), "num_neighbors") == [3, 2]


@pytest.mark.parametrize("bad", [[], [0], [-2], [True], [2.5], 5, "10,10", None])
def test_bad_fanouts_are_one_clear_error(bad: object) -> None:
    with pytest.raises(ConfigError, match=r"^eval_num_neighbors=.* must be a non-empty list of fan-outs per hop "):
        fanouts(bad, "eval_num_neighbors")
