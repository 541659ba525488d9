"""``graph_loader``: batches of a store in order, this rank's share in a data-parallel run, or the graphs' ids only
(parity with PyG's loader: ``test_batching.py``; the device gather: ``test_device_store.py``)."""

from __future__ import annotations

import torch
from torch_geometric.data import Data

from graphbench.data.store.graph_store import GraphStore
from graphbench.data.store.loader import GraphIds, graph_loader
from graphbench.data.store.sharding import Shard

#: five one-node graphs whose feature is their index
STORE = GraphStore.from_list(
    [Data(x=torch.tensor([[float(i)]]), edge_index=torch.zeros(2, 0, dtype=torch.long)) for i in range(5)]
)


def features(loader: torch.utils.data.DataLoader) -> list[list[float]]:
    return [batch.x.flatten().tolist() for batch in loader]


def test_batches_in_order_and_the_last_one_short() -> None:
    assert features(graph_loader(STORE, batch_size=2, shuffle=False)) == [[0.0, 1.0], [2.0, 3.0], [4.0]]


def test_evaluation_in_a_data_parallel_run_takes_this_ranks_contiguous_share() -> None:
    # 5 graphs over 2 ranks: [0:2] and [2:5], unpadded
    assert features(graph_loader(STORE, batch_size=4, shuffle=False, shard=Shard(0, 2))) == [[0.0, 1.0]]
    assert features(graph_loader(STORE, batch_size=4, shuffle=False, shard=Shard(1, 2))) == [[2.0, 3.0, 4.0]]


def test_training_in_a_data_parallel_run_takes_equal_padded_parts_of_one_permutation() -> None:
    parts = [
        [x for batch in features(graph_loader(STORE, batch_size=2, shuffle=True, shard=Shard(r, 2), seed=1)) for x in batch]
        for r in range(2)
    ]
    assert [len(p) for p in parts] == [3, 3] and set(parts[0]) | set(parts[1]) == {0.0, 1.0, 2.0, 3.0, 4.0}


def test_ids_only_hands_out_the_dataset_indices_of_a_views_batches() -> None:
    view = STORE.index_select(torch.tensor([4, 1, 3]))
    batches = list(graph_loader(view, batch_size=2, shuffle=False, ids_only=True))
    assert all(isinstance(b, GraphIds) for b in batches)
    assert [b.ids.tolist() for b in batches] == [[4, 1], [3]]
