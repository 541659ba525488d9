"""The loader of full-batch (transductive) training: one graph, collated once, every epoch."""

from __future__ import annotations

from torch.utils.data import DataLoader
from torch_geometric.data import Batch


def _itself(batch: Batch) -> Batch:
    return batch


def full_batch_loader(batch: Batch) -> DataLoader:
    """A loader whose only batch is ``batch`` itself: no per-epoch collation (for Cora, re-collating
    copies its 2708 x 1433 feature matrix, about a tenth of a GCN training step on CPU). The network
    must not modify its input batch in place, which none of graphbench's does.

    A ``DataLoader`` rather than a bare one-batch iterable, although the latter would spare Lightning's
    fetcher ~60 us an epoch: each epoch's ``DataLoader`` iterator draws its base seed from torch's
    global generator, and without that draw every later random number (the dropout masks) of a
    full-batch run would shift, and with it every number recorded for such runs."""
    return DataLoader([batch], batch_size=None, shuffle=False, collate_fn=_itself)
