"""F1 score of the positive class for binary predictions given as logits."""

from __future__ import annotations

import torch
from torch import Tensor
from torchmetrics import Metric


class LogitBinaryF1(Metric):
    r""":math:`F_1 = \frac{2\,TP}{2\,TP + FP + FN}` of the positive class, predicting positive where the
    logit is > 0 (no guessing whether inputs are probabilities). The metric of TSP edge classification in
    Benchmarking GNNs (Dwivedi et al., 2020). Defined as 0 when there is neither a positive target nor a
    positive prediction."""

    full_state_update = False
    is_differentiable = False
    higher_is_better = True

    def __init__(self) -> None:
        super().__init__()
        for name in ("tp", "fp", "fn"):
            self.add_state(name, default=torch.tensor(0.0), dist_reduce_fx="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        predicted, actual = preds.reshape(-1) > 0, target.reshape(-1) > 0.5
        self.tp += (predicted & actual).sum()
        self.fp += (predicted & ~actual).sum()
        self.fn += (~predicted & actual).sum()

    def compute(self) -> Tensor:
        denominator = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / denominator if denominator > 0 else denominator.new_tensor(0.0)
