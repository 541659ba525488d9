"""graphbench.data.samplers.base: full-batch training, full or neighbor-sampled evaluation, and the link
training loader every sampler shares."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Data

from graphbench.data.samplers import ClusterGCN, FullBatch, NeighborSampling, SamplerContext, no_cache
from graphbench.data.samplers.base import Sampler
from graphbench.vocabulary.errors import ConfigError

CONTEXT = SamplerContext(0, no_cache)


def path() -> Data:
    """0 - 1 - 2 - 3, both directions; 1 and 2 are validation nodes."""
    edge_index = torch.tensor([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]])
    val = torch.tensor([False, True, True, False])
    return Data(x=torch.arange(4.0).view(-1, 1), edge_index=edge_index, train_mask=~val, val_mask=val, num_nodes=4)


def test_full_batch_trains_and_evaluates_on_the_whole_graph() -> None:
    sampler = FullBatch()
    assert sampler.is_full_batch and Sampler().is_full_batch
    assert sampler.batch_size is None
    assert sampler.loader(path(), "train", CONTEXT) is None
    assert sampler.loader(path(), "val", CONTEXT) is None
    assert sampler.link_train_loader(path(), torch.tensor([[0], [1]]), CONTEXT) is None


def test_sampled_evaluation_batches_the_split_nodes_first_with_their_neighbours() -> None:
    sampler = FullBatch(eval="sampled", eval_num_neighbors=[-1], eval_batch_size=2)
    assert sampler.eval_num_neighbors == [-1]
    assert sampler.loader(path(), "train", CONTEXT) is None  # training stays full batch
    (batch,) = list(sampler.loader(path(), "val", CONTEXT))
    assert batch.n_id[:2].tolist() == [1, 2]  # in order, unshuffled
    assert sorted(batch.n_id.tolist()) == [0, 1, 2, 3]
    assert batch.val_mask.tolist() == [True, True, False, False]


def test_link_batches_of_a_node_sampler_are_one_clear_error() -> None:
    with pytest.raises(
        ConfigError, match=r"^sampler=cluster_gcn applies to node-level datasets; .*sampler=full or sampler=neighbor$"
    ):
        ClusterGCN(num_parts=2, parts_per_batch=1).link_train_loader(path(), torch.tensor([[0], [1]]), CONTEXT)
    assert not NeighborSampling(num_neighbors=[1], batch_size=1).is_full_batch


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"eval": "mini"}, r"^eval='mini' is not one of \['full', 'sampled'\]$"),
        ({"eval": "sampled"}, r"^eval=sampled needs eval_num_neighbors \(fan-outs per hop"),
        ({"eval": "sampled", "eval_num_neighbors": [0]}, r"^eval_num_neighbors=\[0\] must be a non-empty list"),
        ({"eval_batch_size": 0}, r"^eval_batch_size=0 must be a positive integer$"),
        ({"batch_size": -3}, r"^batch_size=-3 must be a positive integer$"),
    ],
)
def test_bad_arguments_are_one_clear_error(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        FullBatch(**kwargs)  # type: ignore[arg-type]
