"""Hits@K of OGB link prediction, computed by OGB's own ``Evaluator``."""

from __future__ import annotations

import torch
from ogb.linkproppred import Evaluator
from torch import Tensor
from torchmetrics import Metric
from torchmetrics.utilities import dim_zero_cat


class HitsAtK(Metric):
    r"""The fraction of positive pairs scored above the :math:`K`-th highest score of the negative
    pairs (every positive is ranked against the same set of negatives; OGB's ``hits@K``, e.g. ``hits@50``
    of ogbl-collab). Scores of the whole epoch are collected; :meth:`compute` calls
    ``ogb.linkproppred.Evaluator(ogb_name)`` with its ``K`` set to ``k``. With fewer than ``k``
    negatives OGB returns 1.0."""

    full_state_update = False
    is_differentiable = False
    higher_is_better = True

    def __init__(self, k: int = 50, ogb_name: str = "ogbl-collab") -> None:
        super().__init__()
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        self.k = k
        self.ogb_name = ogb_name
        self.add_state("pos", default=[], dist_reduce_fx="cat")
        self.add_state("neg", default=[], dist_reduce_fx="cat")

    def update(self, pos_scores: Tensor, neg_scores: Tensor) -> None:
        self.pos.append(pos_scores.detach().reshape(-1).float())
        self.neg.append(neg_scores.detach().reshape(-1).float())

    def compute(self) -> Tensor:
        pos, neg = dim_zero_cat(self.pos), dim_zero_cat(self.neg)
        device = pos.device
        pos, neg = pos.cpu(), neg.cpu()  # OGB's Evaluator computes on the host
        if pos.numel() == 0:
            raise RuntimeError("HitsAtK: no positive pairs were scored")
        evaluator = Evaluator(self.ogb_name)
        evaluator.K = self.k
        value = evaluator.eval({"y_pred_pos": pos, "y_pred_neg": neg})[f"hits@{self.k}"]
        return torch.tensor(float(value), device=device)
