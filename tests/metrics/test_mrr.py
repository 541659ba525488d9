from __future__ import annotations

import pytest
import torch

from graphbench.metrics.mrr import LinkRankingMetric, link_ranks

# Nodes of one graph: h, t1, t2, x1, x2 (columns 0..4); scores of (h, v) for every candidate v.
SCORES = torch.tensor([0.95, 0.90, 0.80, 0.60, 0.40])


def worked_example() -> dict[str, torch.Tensor]:
    """The example of Tönshoff et al. (2023): queries (h, t1) and (h, t2), h itself a candidate."""
    scores = SCORES.repeat(2, 1)
    valid = torch.ones(2, 5, dtype=torch.bool)
    true_tails = torch.tensor([[False, True, True, False, False]] * 2)
    return link_ranks(scores, valid, tail=torch.tensor([1, 2]), head=torch.tensor([0, 0]), true_tails=true_tails)


def test_worked_example_of_the_lrgb_reassessment() -> None:
    ranks = worked_example()
    assert ranks["raw"].tolist() == [2.0, 3.0]  # h above t1; h and t1 above t2
    assert ranks["filtered"].tolist() == [2.0, 2.0]  # the other true tail is removed
    assert ranks["ext_filtered"].tolist() == [1.0, 1.0]  # and the self-loop (h, h) too
    metric = LinkRankingMetric("mrr_filtered")
    metric.update(ranks, groups=torch.zeros(2, dtype=torch.long))
    values = metric.compute_all()
    assert values["mrr"].item() == pytest.approx(0.4167, abs=1e-4)
    assert values["mrr_filtered"].item() == pytest.approx(0.5)
    assert values["mrr_ext_filtered"].item() == pytest.approx(1.0)
    assert values["hits@1"].item() == 0.0 and values["hits@3"].item() == 1.0
    assert values["hits@1_ext_filtered"].item() == 1.0
    assert metric.compute().item() == pytest.approx(0.5)


def test_graphs_are_weighted_equally_and_padding_is_ignored() -> None:
    # graph 0: one query ranked 1st; graph 1 (3 real nodes, 2 padding columns): two queries ranked 2nd and 3rd
    scores = torch.tensor([[0.0, 9.0, 1.0, -5.0, -5.0], [3.0, 2.0, 1.0, 99.0, 99.0], [3.0, 2.0, 1.0, 99.0, 99.0]])
    valid = torch.tensor([[True] * 5, [True, True, True, False, False], [True, True, True, False, False]])
    none = torch.zeros(3, 5, dtype=torch.bool)
    ranks = link_ranks(scores, valid, tail=torch.tensor([1, 1, 2]), head=torch.tensor([0, 4, 4]), true_tails=none)
    assert ranks["raw"].tolist() == [1.0, 2.0, 3.0]
    metric = LinkRankingMetric("mrr")
    metric.update(ranks, groups=torch.tensor([7, 3, 3]))
    assert metric.compute().item() == pytest.approx((1.0 + (1 / 2 + 1 / 3) / 2) / 2)


def test_ties_count_half() -> None:
    ranks = link_ranks(
        torch.tensor([[1.0, 1.0, 1.0]]),
        torch.ones(1, 3, dtype=torch.bool),
        torch.tensor([1]),
        torch.tensor([0]),
        torch.zeros(1, 3, dtype=torch.bool),
    )
    assert ranks["raw"].item() == 2.0 and ranks["ext_filtered"].item() == 1.5


def test_unknown_monitor_is_rejected() -> None:
    with pytest.raises(ValueError, match="mrr_filtered"):
        LinkRankingMetric("mrr_fancy")
