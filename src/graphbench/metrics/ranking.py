"""Exact rank-based binary metrics on raw scores (logits): no sigmoid, so no saturated ties."""

from __future__ import annotations

import torch
from torch import Tensor


def _threshold_counts(scores: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    """True/false positive counts at every distinct score threshold, highest threshold first."""
    order = torch.argsort(scores, descending=True, stable=True)
    scores, target = scores[order].double(), target[order].double()
    tps, fps = torch.cumsum(target, 0), torch.cumsum(1.0 - target, 0)
    # the last position of every run of tied scores; the last position always ends a run
    last_of_tie = torch.ones_like(scores, dtype=torch.bool)
    last_of_tie[:-1] = scores[1:] != scores[:-1]
    return tps[last_of_tie], fps[last_of_tie]


def average_precision(scores: Tensor, target: Tensor) -> Tensor:
    r"""Step-wise area under the precision-recall curve,
    :math:`\mathrm{AP} = \sum_n (R_n - R_{n-1}) P_n` over the distinct thresholds (the definition of
    scikit-learn's ``average_precision_score``, which OGB's evaluator calls)."""
    tps, fps = _threshold_counts(scores, target)
    precision = tps / (tps + fps)
    recall = tps / tps[-1]
    recall_prev = torch.cat([recall.new_zeros(1), recall[:-1]])
    return ((recall - recall_prev) * precision).sum()


def roc_auc(scores: Tensor, target: Tensor) -> Tensor:
    r"""Area under the ROC curve by the trapezoidal rule over distinct thresholds (ties count 1/2)."""
    tps, fps = _threshold_counts(scores, target)
    tpr = torch.cat([tps.new_zeros(1), tps / tps[-1]])
    fpr = torch.cat([fps.new_zeros(1), fps / fps[-1]])
    return torch.trapezoid(tpr, fpr)
