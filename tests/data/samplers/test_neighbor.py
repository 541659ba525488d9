"""``sampler=neighbor`` (graphbench.data.samplers.neighbor.NeighborSampling): its arguments, node and link
training loaders on hand-built graphs."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Data

from graphbench.data.samplers import NeighborSampling, SamplerContext, no_cache
from graphbench.vocabulary.errors import ConfigError
from tests.data.samplers.test_neighbor_loader import random_graph


def star() -> Data:
    """Centre 0 with leaves 1..4, both directions; nodes 0 and 1 train."""
    leaves = torch.arange(1, 5)
    edge_index = torch.cat([torch.stack([leaves, torch.zeros_like(leaves)]), torch.stack([torch.zeros_like(leaves), leaves])], 1)
    train = torch.tensor([True, True, False, False, False])
    return Data(x=torch.arange(5.0).view(-1, 1), edge_index=edge_index, train_mask=train, num_nodes=5)


def test_the_training_loader_batches_the_training_nodes_with_their_sampled_neighbours() -> None:
    torch.manual_seed(0)
    loader = NeighborSampling(num_neighbors=[-1], batch_size=2).train_loader(star(), SamplerContext(0, no_cache))
    (batch,) = list(loader)
    assert batch.batch_size == 2
    assert sorted(batch.n_id[:2].tolist()) == [0, 1]
    # every in-neighbour of the seeds, once: the four leaves of 0, and 0 itself for 1
    assert sorted(batch.n_id.tolist()) == [0, 1, 2, 3, 4]
    assert batch.edge_index.size(1) == 5
    assert batch.train_mask.tolist() == [True, True, False, False, False]


def test_link_batches_carry_their_pairs_in_local_ids() -> None:
    graph = random_graph()
    pairs = graph.edge_index[:, :10]
    torch.manual_seed(0)
    loader = NeighborSampling(num_neighbors=[2, 2], batch_size=4).link_train_loader(graph, pairs, SamplerContext(0, no_cache))
    seen = []
    for batch in loader:
        assert torch.equal(batch.n_id[batch.edge_label_index], pairs[:, batch.input_id])
        assert batch.edge_label.eq(1).all()
        seen += batch.input_id.tolist()
    assert sorted(seen) == list(range(10))


def test_it_is_not_full_batch() -> None:
    assert not NeighborSampling(num_neighbors=[2], batch_size=4).is_full_batch


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_neighbors": [], "batch_size": 4}, r"^num_neighbors=\[\] must be a non-empty list of fan-outs per hop"),
        ({"num_neighbors": [0], "batch_size": 4}, r"^num_neighbors=\[0\] must be "),
        ({"num_neighbors": [2], "batch_size": 0}, r"^batch_size=0 must be a positive integer$"),
    ],
)
def test_bad_arguments_are_one_clear_error(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        NeighborSampling(**kwargs)  # type: ignore[arg-type]
