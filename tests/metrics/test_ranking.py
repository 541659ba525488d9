"""Rank-based AP and ROC-AUC on raw scores: exact values on hand examples, ties as one threshold."""

from __future__ import annotations

import pytest
import torch

from graphbench.metrics.ranking import average_precision, roc_auc


def test_average_precision_hand_example() -> None:
    # ranking: 0.9(+) 0.8(-) 0.7(+) 0.1(-): precision at the positives 1 and 2/3 -> AP = (1 + 2/3) / 2
    ap = average_precision(torch.tensor([0.9, 0.8, 0.7, 0.1]), torch.tensor([1.0, 0.0, 1.0, 0.0]))
    assert ap.item() == pytest.approx(5 / 6)


def test_average_precision_ties_form_one_threshold() -> None:
    # all scores tied: one threshold, precision 1/2 at recall 1
    assert average_precision(torch.zeros(4), torch.tensor([1.0, 0.0, 1.0, 0.0])).item() == pytest.approx(0.5)


def test_roc_auc_hand_example() -> None:
    # positives {0.9, 0.7}, negatives {0.8, 0.1}: 3 of 4 pairs ordered correctly
    auc = roc_auc(torch.tensor([0.9, 0.8, 0.7, 0.1]), torch.tensor([1.0, 0.0, 1.0, 0.0]))
    assert auc.item() == pytest.approx(0.75)


def test_roc_auc_counts_a_tied_pair_as_one_half() -> None:
    # positive 0.5 tied with negative 0.5, above negative 0.1: pairs (1/2 + 1) of 2
    auc = roc_auc(torch.tensor([0.5, 0.5, 0.1]), torch.tensor([1.0, 0.0, 0.0]))
    assert auc.item() == pytest.approx(0.75)
