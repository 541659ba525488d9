from __future__ import annotations

import pytest
import torch
from ogb.linkproppred import Evaluator

from graphbench.metrics.hits import HitsAtK


def test_hits_at_k_by_hand_across_batches() -> None:
    metric = HitsAtK(k=2)
    metric.update(torch.tensor([5.0, 0.5]), torch.tensor([4.0, 1.0]))
    metric.update(torch.tensor([3.0]), torch.tensor([0.0, 2.0]))
    # negatives sorted: 4, 2, 1, 0 -> the 2nd highest is 2; positives above it: 5 and 3
    assert metric.compute().item() == pytest.approx(2 / 3)


def test_equals_ogb_evaluator_for_collab() -> None:
    gen = torch.Generator().manual_seed(0)
    pos, neg = torch.randn(300, generator=gen) + 1.0, torch.randn(1000, generator=gen)
    metric = HitsAtK(k=50)
    metric.update(pos, neg)
    expected = Evaluator("ogbl-collab").eval({"y_pred_pos": pos, "y_pred_neg": neg})["hits@50"]
    assert metric.compute().item() == pytest.approx(expected)
