"""Mini-batches gathered from a :class:`DeviceStore` (``dataset.batch_on_device``) are the batches
the CPU loader builds: same graphs, same order, every tensor and slice dictionary equal."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Data

from graphbench.data.store.device_store import DeviceStore
from graphbench.data.store.encodings import precompute_store
from graphbench.data.store.graph_store import GraphStore
from graphbench.data.store.loader import GraphIds, graph_loader
from graphbench.transforms.rwse import RWSE
from tests.data.store.test_batching import GRAPHS, assert_same_batch


def test_loader_with_ids_only_yields_the_dataset_indices_of_each_batch() -> None:
    view = GraphStore.from_list(GRAPHS * 3).index_select([11, 2, 7, 4, 0])
    batches = list(graph_loader(view, batch_size=2, shuffle=False, ids_only=True))
    assert all(isinstance(b, GraphIds) for b in batches)
    assert [b.ids.tolist() for b in batches] == [[11, 2], [7, 4], [0]]


def assert_device_gather_equals_cpu_loader(store: GraphStore, view: GraphStore, batch_size: int, shuffle: bool) -> int:
    """Every batch of ``view``'s loader equals the one gathered from ``store``'s DeviceStore (on the
    CPU) by the ids its ``ids_only`` loader yields, both loaders seeded alike; returns the batch count."""
    on_device = DeviceStore(store, torch.device("cpu"))
    torch.manual_seed(3)
    ids = list(graph_loader(view, batch_size=batch_size, shuffle=shuffle, ids_only=True))
    torch.manual_seed(3)
    plain = list(graph_loader(view, batch_size=batch_size, shuffle=shuffle))
    assert len(ids) == len(plain)
    for graph_ids, batch in zip(ids, plain):
        assert_same_batch(on_device.batch(graph_ids.ids), batch)
    return len(plain)


@pytest.mark.parametrize("shuffle", [False, True])
def test_gathered_from_the_device_store_equals_the_cpu_loaders_batches(shuffle: bool) -> None:
    store = GraphStore.from_list(GRAPHS * 5)
    view = store.index_select([3, 19, 0, 8, 12, 5, 1, 16, 9])
    assert assert_device_gather_equals_cpu_loader(store, view, batch_size=4, shuffle=shuffle) == 3


def test_a_store_the_bulk_gather_cannot_batch_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot be gathered on the device"):
        DeviceStore(GraphStore.from_list(GRAPHS, transform=lambda data: data), torch.device("cpu"))
    explicit_counts = [Data(x=torch.zeros(2, 1), num_nodes=2), Data(x=torch.zeros(1, 1), num_nodes=1)]
    with pytest.raises(ValueError, match="cannot be gathered on the device"):
        DeviceStore(GraphStore.from_list(explicit_counts), torch.device("cpu"))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_gathered_on_cuda_equals_the_cpu_batch() -> None:
    store = GraphStore.from_list(GRAPHS * 5)
    on_device = DeviceStore(store, torch.device("cuda"))
    ids = torch.tensor([7, 0, 13, 2])
    batch, expected = on_device.batch(ids), store.batch(ids.tolist())
    assert sorted(batch.keys()) == sorted(expected.keys())
    for key in expected.keys():
        assert batch[key].device.type == "cuda" and torch.equal(batch[key].cpu(), expected[key]), key
    for name in ("_slice_dict", "_inc_dict"):
        for key, value in getattr(expected, name).items():
            assert torch.equal(getattr(batch, name)[key].cpu(), value), (name, key)


@pytest.mark.real_data
def test_real_peptide_batches_with_encodings_gathered_on_the_device_equal_the_cpu_batches(peptide_graphs: list[Data]) -> None:
    store = precompute_store(GraphStore.from_list(peptide_graphs), RWSE(k=20))
    view = store.index_select(torch.arange(1, len(peptide_graphs), 2))
    assert assert_device_gather_equals_cpu_loader(store, view, batch_size=32, shuffle=True) == 5
