"""Which examples each process of a data-parallel (DDP) run sees.

Lightning's own distributed sampler pads every split to a multiple of the number of processes with
repeated examples, so that every rank runs the same number of steps. That is what training needs
(every rank must take part in every gradient all-reduce), but it would count the repeated examples
twice in a test metric and in ``predictions.npz``. graphbench therefore turns Lightning's sampler
off (``use_distributed_sampler=False``) and shards the data itself:

- training: :class:`torch.utils.data.DistributedSampler` (a seeded permutation per epoch, padded);
- evaluation: contiguous, unpadded shares (:func:`eval_share`); ranks may differ by one example,
  which evaluation allows since it has no per-step collective (torchmetrics syncs once per epoch).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from torch.utils.data import DistributedSampler


@dataclass(frozen=True)
class Shard:
    """This process's place in a data-parallel run: ``rank`` of ``world_size`` processes."""

    rank: int
    world_size: int

    def __post_init__(self) -> None:
        if self.world_size < 1 or not 0 <= self.rank < self.world_size:
            raise ValueError(f"rank {self.rank} is not in a world of {self.world_size} processes")

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


def eval_share(items: Sequence[int], shard: Shard) -> Sequence[int]:
    """Rank ``r``'s contiguous share ``items[r * n // w : (r + 1) * n // w]`` of ``n`` items over
    ``w`` ranks: every item in exactly one share, none repeated."""
    n = len(items)
    return items[shard.rank * n // shard.world_size : (shard.rank + 1) * n // shard.world_size]


def train_sampler(num_items: int, shard: Shard, seed: int) -> DistributedSampler:
    """Rank ``r``'s part of a permutation of ``num_items`` drawn from ``seed`` and the epoch (the
    training loop calls ``set_epoch``), padded so that every rank takes the same number of steps."""
    return DistributedSampler(
        range(num_items), num_replicas=shard.world_size, rank=shard.rank, shuffle=True, seed=seed, drop_last=False
    )
