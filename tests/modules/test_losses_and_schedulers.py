from __future__ import annotations

import math

import pytest
import torch

from graphbench.modules.losses import MaskedBCEWithLogitsLoss, pos_neg_bce
from graphbench.modules.schedulers import cosine_with_warmup, plateau


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


def test_cosine_with_warmup_values() -> None:
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    sched = cosine_with_warmup(opt, monitor="val/ap", mode="max", warmup_epochs=2, max_epochs=6).lightning_config["scheduler"]
    lrs = []
    for _ in range(6):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    expected = [1 / 3, 2 / 3, 1.0, 0.5 * (1 + math.cos(math.pi / 4)), 0.5, 0.5 * (1 + math.cos(3 * math.pi / 4))]
    assert lrs == pytest.approx(expected)


def test_plateau_halves_and_reports_stop_threshold() -> None:
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    spec = plateau(opt, monitor="val/mae", mode="min", factor=0.5, patience=1, min_lr=0.3)
    sched = spec.lightning_config["scheduler"]
    assert spec.lightning_config["monitor"] == "val/mae" and spec.stop_below_lr == 0.3
    for value in (1.0, 1.0, 1.0, 1.0, 1.0):
        sched.step(value)
    assert opt.param_groups[0]["lr"] == 0.25


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
