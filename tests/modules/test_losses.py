"""The losses of ``modules/losses.py``: masked BCE over labelled entries, positive/negative BCE; the torch losses
the dataset configs name."""

from __future__ import annotations

import math

import pytest
import torch
from torch.nn import functional as F

from graphbench.modules.losses import (
    BalancedBCEWithLogitsLoss,
    BatchWeightedCrossEntropyLoss,
    MaskedBCEWithLogitsLoss,
    pos_neg_bce,
)


def test_bce_ignores_unlabelled_targets() -> None:
    logits = torch.tensor([[0.0, 5.0], [0.0, -5.0]])
    target = torch.tensor([[1.0, float("nan")], [0.0, float("nan")]])
    assert MaskedBCEWithLogitsLoss()(logits, target).item() == pytest.approx(math.log(2.0))


def test_multiclass_and_regression_losses() -> None:
    """The torch losses the dataset configs name, on the targets the task module hands them."""
    logits = torch.tensor([[0.0, 0.0]])
    assert torch.nn.CrossEntropyLoss()(logits, torch.tensor([1])).item() == pytest.approx(math.log(2.0))
    prediction, target = torch.tensor([[1.0], [4.0]]), torch.tensor([[2.0], [2.0]])
    assert torch.nn.L1Loss()(prediction, target).item() == pytest.approx(1.5)
    assert torch.nn.MSELoss()(prediction, target).item() == pytest.approx(2.5)


def test_pos_neg_bce_sums_the_two_means() -> None:
    pos, neg = torch.zeros(2), torch.zeros(3)
    assert pos_neg_bce(pos, neg).item() == pytest.approx(2 * math.log(2.0))
    assert pos_neg_bce(pos, neg[:0]).item() == pytest.approx(math.log(2.0))


def test_bce_over_labelled_entries_is_the_bce_of_those_entries_and_leaves_the_others_without_gradient() -> None:
    nan = float("nan")
    logits = torch.tensor([[0.3, -1.2, 2.0], [1.5, 0.1, -0.7]], requires_grad=True)
    target = torch.tensor([[1.0, nan, 0.0], [nan, 1.0, 1.0]])
    labelled = ~torch.isnan(target)
    loss = MaskedBCEWithLogitsLoss()(logits, target)
    expected = torch.nn.functional.binary_cross_entropy_with_logits(logits.detach()[labelled], target[labelled])
    assert loss.item() == pytest.approx(expected.item(), rel=1e-6)
    loss.backward()
    assert logits.grad is not None
    assert torch.equal(logits.grad[~labelled], torch.zeros(2))
    assert bool((logits.grad[labelled] != 0).all())


def test_balanced_bce_weights_each_class_by_the_others_frequency() -> None:
    # one positive of four: w_1 = 3/4, w_0 = 1/4; (3/4 l_pos + 3 * 1/4 l_neg) / (3/4 + 3/4) = (l_pos + l_neg) / 2
    logits, target = torch.tensor([2.0, 0.0, 0.0, 0.0]), torch.tensor([1.0, 0.0, 0.0, 0.0])
    l_pos, l_neg = math.log1p(math.exp(-2.0)), math.log(2.0)
    assert BalancedBCEWithLogitsLoss()(logits, target).item() == pytest.approx((l_pos + l_neg) / 2)
    # one class only: the plain mean
    assert BalancedBCEWithLogitsLoss()(logits, torch.ones(4)).item() == pytest.approx((l_pos + 3 * math.log(2.0)) / 4)


def test_batch_weighted_cross_entropy_is_graphgps_weighted_cross_entropy() -> None:
    """GraphGPS's weighted_cross_entropy: w_c = (V - n_c) / V for the classes present, 0 for the others."""
    torch.manual_seed(0)
    logits, target = torch.randn(6, 4), torch.tensor([0, 0, 0, 1, 3, 3])
    weight = torch.tensor([3 / 6, 5 / 6, 0.0, 4 / 6])
    expected = F.nll_loss(F.log_softmax(logits, dim=-1), target, weight=weight)
    torch.testing.assert_close(BatchWeightedCrossEntropyLoss()(logits, target), expected)
