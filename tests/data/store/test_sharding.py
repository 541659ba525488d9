"""``Shard``, ``eval_share`` and ``train_sampler``: which examples each process of a data-parallel run sees
(the samplers' use of them: ``tests/data/samplers/test_sharding.py``)."""

from __future__ import annotations

import pytest

from graphbench.data.store.sharding import Shard, eval_share, train_sampler


@pytest.mark.parametrize(("rank", "world_size"), [(0, 0), (2, 2), (-1, 3)])
def test_a_rank_outside_its_world_is_refused(rank: int, world_size: int) -> None:
    with pytest.raises(ValueError, match=f"^rank {rank} is not in a world of {world_size} processes$"):
        Shard(rank, world_size)


def test_only_a_world_of_more_than_one_is_distributed() -> None:
    assert not Shard(0, 1).distributed and Shard(1, 2).distributed


def test_eval_shares_are_contiguous_unpadded_and_cover_every_item_once() -> None:
    items = list(range(10, 17))  # 7 items over 3 ranks: [0:2], [2:4], [4:7]
    shares = [eval_share(items, Shard(r, 3)) for r in range(3)]
    assert shares == [[10, 11], [12, 13], [14, 15, 16]]
    assert eval_share(items, Shard(0, 1)) == items


def test_train_parts_are_padded_to_equal_length_and_follow_seed_and_epoch() -> None:
    samplers = [train_sampler(5, Shard(r, 2), seed=3) for r in range(2)]
    parts = [list(s) for s in samplers]
    assert [len(p) for p in parts] == [3, 3]  # 5 items padded to 6
    assert set(parts[0]) | set(parts[1]) == set(range(5))
    assert parts == [list(train_sampler(5, Shard(r, 2), seed=3)) for r in range(2)]  # same seed, same parts
    for s in samplers:
        s.set_epoch(1)
    later = [list(s) for s in samplers]
    assert later != parts and set(later[0]) | set(later[1]) == set(range(5))
