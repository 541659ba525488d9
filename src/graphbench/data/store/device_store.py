"""A collated dataset kept on the training device, from which mini-batches are gathered there.

Gathering a batch on the CPU and copying it to an accelerator costs, every step, one host-side
``index_select`` per attribute and one host-to-device copy of the whole batch, and the accelerator
waits for both whenever they take longer than its step. A :class:`DeviceStore` copies the
collated tensors to the device once; a step then sends only the batch's graph ids (a few hundred
integers), and :func:`~graphbench.data.store.batching.gather_batch` runs on the device. The batch
is the one :meth:`GraphStore.batch` gathers on the CPU, tensor for tensor.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch_geometric.data import Batch, Data

from graphbench.data.store.batching import Column, gather_batch
from graphbench.data.store.graph_store import GraphStore
from graphbench.data.store.padding import Buckets, pad_batch


class DeviceStore:
    """The collated tensors and row offsets of ``store`` (the whole dataset, not a split view), on
    ``device``. It holds one copy of the dataset on the device, in addition to the host copy."""

    def __init__(self, store: GraphStore, device: torch.device) -> None:
        plan = store.plan()
        if plan is None or store.transform is not None:
            raise ValueError(
                "this dataset cannot be gathered on the device: it has a per-graph transform or attributes "
                "that only PyG's per-graph collate batches (see graphbench.data.store.batching.batching_plan)"
            )
        self.device = device
        self.plan: list[Column] = plan
        self.collated: Data = store.collated.to(device)
        self.slices: dict[str, Tensor] = {key: value.to(device) for key, value in store.slices.items()}

    def batch(self, ids: Tensor, buckets: Buckets | None = None) -> Batch:
        """The graphs with dataset indices ``ids``, collated on the device, and padded to the smallest of
        ``buckets`` that fits them when given (:func:`~graphbench.data.store.padding.pad_batch`)."""
        batch = gather_batch(self.collated, self.slices, self.plan, ids.to(self.device, non_blocking=True))
        if buckets is None:
            return batch
        return pad_batch(batch, buckets.fit(int(batch.num_nodes), int(batch.num_edges)), buckets.graphs)
