"""Accuracy of binary (or multilabel) predictions given as logits."""

from __future__ import annotations

import torch
from torch import Tensor
from torchmetrics import Metric


class LogitBinaryAccuracy(Metric):
    r"""Fraction of labelled entries with :math:`\mathbb{1}[\text{logit} > 0] = y`; NaN targets ignored.

    (torchmetrics' ``BinaryAccuracy`` guesses whether inputs are logits from their range; this does not guess.)
    """

    full_state_update = False

    def __init__(self) -> None:
        super().__init__()
        self.add_state("correct", default=torch.tensor(0.0), dist_reduce_fx="sum")
        self.add_state("total", default=torch.tensor(0.0), dist_reduce_fx="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        preds, target = preds.reshape(-1), target.reshape(-1).float()
        labelled = ~torch.isnan(target)
        self.correct += ((preds[labelled] > 0).float() == target[labelled]).sum()
        self.total += labelled.sum()

    def compute(self) -> Tensor:
        return self.correct / self.total
