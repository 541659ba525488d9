"""LiRA (Carlini et al. 2022) on hand-made confidences with values worked out by hand (the task that runs it:
``tests/tasks/test_mia.py``)."""

from __future__ import annotations

import math

import pytest
import torch

from graphbench.analysis.mia import (
    GaussianFits,
    fit_gaussians,
    leave_one_out_scores,
    logit_confidence,
    offline_score,
    online_score,
    roc_summary,
    shadow_membership,
)
from graphbench.vocabulary.errors import ConfigError


def test_logit_confidence_is_the_log_odds_of_the_true_label() -> None:
    probs = torch.tensor([[0.5, 0.25, 0.25], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]])
    labels = torch.tensor([0, 1, 0])
    expected = [0.0, math.log(0.8 / 0.2), math.log(0.2 / 0.8)]
    assert logit_confidence(probs, labels).tolist() == pytest.approx(expected, abs=1e-7)
    # [models, nodes, classes] with one label per node
    stacked = logit_confidence(torch.stack([probs, probs.flip(-1)]), labels)
    assert stacked.shape == (2, 3)
    assert stacked[1].tolist() == pytest.approx([math.log(0.25 / 0.75), math.log(0.8 / 0.2), math.log(0.6 / 0.4)], abs=1e-7)


def test_logit_confidence_keeps_precision_where_one_minus_p_rounds_to_zero() -> None:
    # p_y = 1 - 2e-9 is exactly 1.0 in float32, but the other classes still carry the odds
    probs = torch.tensor([[1.0, 1e-9, 1e-9]], dtype=torch.float32)
    assert logit_confidence(probs, torch.tensor([0])).item() == pytest.approx(-math.log(2e-9), rel=1e-6)
    # all mass on one wrong class: finite, floored at float32's smallest positive number
    phi = logit_confidence(torch.tensor([[0.0, 1.0]]), torch.tensor([0])).item()
    assert phi == pytest.approx(math.log(torch.finfo(torch.float32).tiny))


def test_shadow_membership_puts_every_node_in_exactly_half_of_the_models() -> None:
    keep = shadow_membership(8, 50, seed=3)
    assert keep.shape == (8, 50) and keep.dtype == torch.bool
    assert keep.sum(0).tolist() == [4] * 50
    assert torch.equal(keep, shadow_membership(8, 50, seed=3))
    assert not torch.equal(keep, shadow_membership(8, 50, seed=4))
    for bad in (4, 7):
        with pytest.raises(ConfigError, match="even number >= 6"):
            shadow_membership(bad, 50, seed=0)


def test_gaussian_fits_are_per_node_means_and_population_stds() -> None:
    phi = torch.tensor([[1.0, 0.0], [3.0, 2.0], [-1.0, 5.0], [-3.0, 7.0]], dtype=torch.float64)
    keep = torch.tensor([[True, False], [True, False], [False, True], [False, True]])
    fits = fit_gaussians(phi, keep)
    assert fits.mean_in.tolist() == [2.0, 6.0] and fits.std_in.tolist() == [1.0, 1.0]
    assert fits.mean_out.tolist() == [-2.0, 1.0] and fits.std_out.tolist() == [1.0, 1.0]
    both_first = torch.tensor([[True, True], [True, True], [False, False], [False, False]])
    pooled = fit_gaussians(torch.tensor([[0.0, 0.0], [2.0, 6.0], [1.0, 1.0], [1.0, 1.0]]), both_first, global_variance=True)
    # IN deviations: node 0: +-1, node 1: +-3 -> pooled std sqrt(5); OUT deviations all 0 -> the floor
    assert pooled.std_in.tolist() == pytest.approx([math.sqrt(5.0)] * 2)
    assert pooled.std_out.tolist() == [1e-30, 1e-30]


def test_likelihood_ratio_on_known_gaussians() -> None:
    fits = GaussianFits(
        mean_in=torch.tensor([1.0]), std_in=torch.tensor([1.0]), mean_out=torch.tensor([-1.0]), std_out=torch.tensor([2.0])
    )
    # log N(0; 1, 1) - log N(0; -1, 4) = -1/2 + 1/8 + log 2
    assert online_score(torch.tensor([0.0]), fits).item() == pytest.approx(-0.375 + math.log(2.0))
    # at the IN mean: 0 - (-(2/2)^2/2 - log 2) = 1/2 + log 2
    assert online_score(torch.tensor([1.0]), fits).item() == pytest.approx(0.5 + math.log(2.0))
    # offline: log Pr[Z <= phi], Z ~ N(-1, 4): at the OUT mean log(1/2); one std above log(0.841344746)
    assert offline_score(torch.tensor([-1.0, 1.0]), fits).tolist() == pytest.approx([math.log(0.5), math.log(0.8413447460685429)])


def test_perfectly_separable_confidences_give_auc_one() -> None:
    keep = shadow_membership(8, 40, seed=0)
    noise = torch.randn(8, 40, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 0.1
    phi = torch.where(keep, 4.0, -4.0) + noise
    for offline in (False, True):
        summary = roc_summary(leave_one_out_scores(phi, keep, offline=offline), keep)
        assert summary == {"auc": 1.0, "tpr_at_low_fpr": 1.0}


def test_identical_in_and_out_distributions_give_chance() -> None:
    keep = shadow_membership(8, 500, seed=1)
    phi = torch.randn(8, 500, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    summary = roc_summary(leave_one_out_scores(phi, keep), keep)
    assert abs(summary["auc"] - 0.5) < 0.03  # 4,000 pairs: the AUC's standard error is about 0.009
    assert summary["tpr_at_low_fpr"] < 0.05


def test_roc_summary_on_a_hand_made_ranking() -> None:
    # members 0.9, 0.8, 0.3; non-members 0.7, 0.2, 0.1 -> 8 of 9 pairs ordered; at FPR 0 the TPR is 2/3
    scores = torch.tensor([90.0, 80.0, 30.0, 70.0, 20.0, 10.0])  # far outside [0, 1]: no sigmoid ties
    members = torch.tensor([True, True, True, False, False, False])
    summary = roc_summary(scores, members)
    assert summary["auc"] == pytest.approx(8 / 9)
    assert summary["tpr_at_low_fpr"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="both members and non-members"):
        roc_summary(scores, torch.ones(6, dtype=torch.bool))
