"""The loader of full-batch (transductive) training: one graph, collated once, every epoch."""

from __future__ import annotations

from collections.abc import Iterator

from torch_geometric.data import Batch


class FullBatchLoader:
    """A loader whose only batch is ``batch`` itself: no per-epoch collation (for Cora, re-collating
    copies its 2708 x 1433 feature matrix, about a tenth of a GCN training step on CPU). The network
    must not modify its input batch in place, which none of graphbench's does.

    Not a ``torch.utils.data.DataLoader``: with one batch and nothing to sample, shuffle or collate,
    its iterator machinery (index sampler, fetcher, profiling scope) only adds Python work to every
    epoch, about 60 us of a 11 ms Cora GCN epoch through Lightning's fetcher. Lightning accepts any
    sized iterable; not a list, which it would read as several loaders.
    """

    def __init__(self, batch: Batch) -> None:
        self.batch = batch

    def __iter__(self) -> Iterator[Batch]:
        yield self.batch

    def __len__(self) -> int:
        return 1
