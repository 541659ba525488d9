"""``LinkTaskModule`` on hand-made node embeddings: pair scores, sampled negatives, ranking queries worked out by
hand, the test step's predictions, and its configuration errors."""

from __future__ import annotations

import pytest
import torch
from torch import Tensor, nn
from torch.nn import functional as F
from torch_geometric.data import Batch, Data

from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.modules.link_task_module import LinkTaskModule, invalid_pairs
from graphbench.vocabulary.errors import ConfigError


class Embeddings(nn.Module):
    """A network whose node embeddings are the batch's ``h`` and whose head multiplies by one: a pair's score is
    :math:`h_u \\cdot h_v`."""

    def __init__(self, dim: int = 1) -> None:
        super().__init__()
        self.head = nn.Linear(dim, 1, bias=False)
        nn.init.ones_(self.head.weight)

    def forward(self, batch: Batch) -> Tensor:
        return batch.h


def module(protocol: str, metric: str, **kwargs: object) -> LinkTaskModule:
    info = DatasetInfo("toy", "link", "binary", 1, metric, True, FeatureSpec("constant"), None)
    optimizer = lambda params: torch.optim.SGD(params, lr=0.1)  # noqa: E731
    return LinkTaskModule(Embeddings(), info, optimizer, **{"loss": None, "protocol": protocol, **kwargs})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"protocol": "sampling"}, r"^protocol='sampling' is not one of \['classification', 'hits', 'ranking'\]$"),
        ({"protocol": "hits", "num_negatives": -1}, r"^num_negatives=-1 must be a non-negative integer$"),
        ({"protocol": "classification"}, r"^protocol=classification needs a loss \(e.g. loss="),
    ],
)
def test_configuration_errors_name_the_key_and_what_is_valid(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        module(metric="hits@20", **kwargs)


def test_pair_scores_are_the_head_of_the_product_in_any_chunk_size() -> None:
    h = torch.tensor([[1.0], [2.0], [-3.0]])
    pairs = torch.tensor([[0, 1, 2], [1, 2, 2]])
    for chunk in (1, 2, 65536):
        assert module("hits", "hits@20", score_chunk=chunk).score(h, pairs).tolist() == [2.0, -6.0, 9.0]
    assert module("hits", "hits@20").score(h, pairs[:, :0]).tolist() == []


def test_ranking_negatives_keep_the_head_and_draw_tails_of_its_graph_never_a_positive() -> None:
    batch = Batch.from_data_list([Data(num_nodes=4), Data(num_nodes=3)])
    pos = torch.tensor([[0, 5], [1, 6]])
    task = module("ranking", "mrr_filtered", num_negatives=50)
    torch.manual_seed(0)
    neg = task.sample_negatives(batch, pos, num_nodes=7)
    heads, tails = neg.tolist()
    assert set(heads) == {0, 5}
    assert all((t < 4) if h == 0 else (4 <= t < 7) for h, t in zip(heads, tails, strict=True))
    assert (0, 1) not in set(zip(heads, tails, strict=True)) and (5, 6) not in set(zip(heads, tails, strict=True))
    hits = module("hits", "hits@20", num_negatives=3)
    assert hits.sample_negatives(batch, pos, num_nodes=7).shape == (2, 6)
    assert module("hits", "hits@20", num_negatives=0).sample_negatives(batch, pos, num_nodes=7).shape == (2, 0)


def test_ranking_queries_by_hand() -> None:
    # graph A: h = 1, 2, 3 (nodes 0-2), positives 0->1 and 0->2; graph B: h = 1, -1 (nodes 3-4), positive 3->4
    batch = Batch.from_data_list(
        [Data(h=torch.tensor([[1.0], [2.0], [3.0]]), num_nodes=3), Data(h=torch.tensor([[1.0], [-1.0]]), num_nodes=2)]
    )
    pos = torch.tensor([[0, 0, 3], [1, 2, 4]])
    ranks, groups, positive, loss = module("ranking", "mrr_filtered").rank_queries(batch, batch.h, pos)
    # head 0's candidates score 1, 2, 3; head 3's score 1, -1 (a padded third column)
    assert {k: v.tolist() for k, v in ranks.items()} == {
        "raw": [2.0, 1.0, 2.0],
        "filtered": [1.0, 1.0, 2.0],
        "ext_filtered": [1.0, 1.0, 1.0],
    }
    assert groups.tolist() == [0, 0, 1] and positive.tolist() == [2.0, 3.0, -1.0]
    logits = torch.tensor([1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, -1.0])
    labels = torch.tensor([0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    assert loss.item() == pytest.approx(F.binary_cross_entropy_with_logits(logits, labels).item())


def test_classification_test_step_returns_every_labelled_pair_with_its_id() -> None:
    info = DatasetInfo("toy", "link", "binary", 1, "f1", True, FeatureSpec("constant"), None)
    task = LinkTaskModule(
        Embeddings(), info, lambda params: torch.optim.SGD(params, lr=0.1), loss=nn.BCEWithLogitsLoss(), protocol="classification"
    )
    graph = Data(
        h=torch.tensor([[1.0], [2.0], [-1.0]]),
        edge_label_index=torch.tensor([[0, 1, 2], [1, 2, 0]]),
        edge_label=torch.tensor([1.0, 0.0, 0.0]),
        edge_label_id=torch.tensor([7, 8, 9]),
        num_nodes=3,
    )
    out = task.test_step(Batch.from_data_list([graph]), 0)
    assert out["y_pred"].tolist() == [2.0, -2.0, -1.0] and out["y_true"].tolist() == [1.0, 0.0, 0.0]
    assert out["index"].tolist() == [7, 8, 9]
    assert task.metrics["test_metric"].compute().item() == 1.0  # F1 of 1 true positive, no false ones


def test_ranking_trains_with_the_configured_loss_over_all_sampled_pairs() -> None:
    """dataset.module.loss (GraphGPS's binary cross-entropy): one mean over positives and negatives together;
    without one, OGB's mean over positives plus mean over negatives."""
    pos, neg = torch.tensor([2.0]), torch.tensor([-1.0, 0.5])
    pooled = module("ranking", "mrr", loss=nn.BCEWithLogitsLoss()).sampled_pairs_loss(pos, neg)
    expected = F.binary_cross_entropy_with_logits(torch.tensor([2.0, -1.0, 0.5]), torch.tensor([1.0, 0.0, 0.0]))
    torch.testing.assert_close(pooled, expected)
    ogb = module("ranking", "mrr").sampled_pairs_loss(pos, neg)
    torch.testing.assert_close(ogb, F.softplus(-pos).mean() + F.softplus(neg).mean())


def test_invalid_pairs_are_positives_and_every_repeat_after_the_first() -> None:
    keys = torch.tensor([7, 3, 7, 9, 3, 7, 2])
    assert invalid_pairs(keys, positives=torch.tensor([2, 11])).tolist() == [False, False, True, False, True, True, True]


def test_ranking_negatives_are_redrawn_until_no_pair_repeats_or_hits_a_positive() -> None:
    # one graph of 3 nodes, head 0 with positive tail 1: the valid negatives of head 0 are (0, 0) and (0, 2)
    batch = Batch.from_data_list([Data(num_nodes=3)])
    pos = torch.tensor([[0], [1]])
    task = module("ranking", "mrr_filtered", num_negatives=2)
    both = 0
    for seed in range(20):
        torch.manual_seed(seed)
        pairs = list(zip(*task.sample_negatives(batch, pos, num_nodes=3).tolist(), strict=True))
        assert len(set(pairs)) == len(pairs) and set(pairs) <= {(0, 0), (0, 2)}
        both += len(pairs) == 2
    # one draw alone gives both valid pairs with probability 2/3 * 1/3; ten redraws leave a slot invalid
    # with probability about (2/3)^11 each: 18 of 20 seeds at least (these seeds: 19)
    assert both >= 18


def test_ranking_negatives_that_stay_invalid_are_dropped() -> None:
    # head 0's only other node is a positive: every draw is invalid, every negative dropped after the redraws
    batch = Batch.from_data_list([Data(num_nodes=2)])
    pos = torch.tensor([[0, 0], [0, 1]])
    neg = module("ranking", "mrr_filtered", num_negatives=3).sample_negatives(batch, pos, num_nodes=2)
    assert neg.shape == (2, 0)
