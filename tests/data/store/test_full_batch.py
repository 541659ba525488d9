"""The full-batch loader yields its one batch, the same object, every epoch."""

from __future__ import annotations

import torch
from torch_geometric.data import Batch, Data

from graphbench.data.store.full_batch import full_batch_loader


def test_every_epoch_yields_the_one_batch_itself() -> None:
    batch = Batch.from_data_list([Data(x=torch.ones(3, 2), edge_index=torch.tensor([[0, 1], [1, 2]]))])
    loader = full_batch_loader(batch)
    assert len(loader) == 1
    for _ in range(2):
        batches = list(loader)
        assert len(batches) == 1 and batches[0] is batch
