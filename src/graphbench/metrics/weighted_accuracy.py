"""Class-balanced ("weighted") accuracy, the metric of PATTERN and CLUSTER in Benchmarking GNNs."""

from __future__ import annotations

import torch
from torch import Tensor
from torchmetrics import Metric


class WeightedAccuracy(Metric):
    r"""Mean over classes of the per-class recall,
    :math:`\frac{1}{|C|}\sum_{c \in C} \frac{|\{i : y_i = c,\ \hat y_i = c\}|}{|\{i : y_i = c\}|}`, where
    :math:`C` are the classes that occur in the targets and :math:`\hat y_i = \arg\max` of the logits.

    This is ``accuracy_SBM`` of Benchmarking GNNs (Dwivedi et al., 2020), which weights every class
    equally so that predicting the majority class of PATTERN (~85% of the nodes) scores 50%, not 85%.
    It is computed over the whole epoch (Benchmarking GNNs averages per-batch values) and lies in [0, 1].
    """

    full_state_update = False
    is_differentiable = False
    higher_is_better = True

    def __init__(self, num_classes: int) -> None:
        super().__init__()
        if num_classes < 2:
            raise ValueError(f"num_classes must be >= 2, got {num_classes}")
        self.num_classes = num_classes
        self.add_state("correct", default=torch.zeros(num_classes), dist_reduce_fx="sum")
        self.add_state("support", default=torch.zeros(num_classes), dist_reduce_fx="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        target = target.reshape(-1).long()
        predicted = preds.argmax(dim=-1).reshape(-1) if preds.dim() > 1 else preds.reshape(-1).long()
        hits = (predicted == target).float()
        self.support += torch.bincount(target, minlength=self.num_classes).float()[: self.num_classes]
        self.correct += torch.zeros(self.num_classes, device=hits.device).index_add_(0, target, hits)

    def compute(self) -> Tensor:
        present = self.support > 0
        if not present.any():
            raise RuntimeError("WeightedAccuracy: no targets were seen")
        return (self.correct[present] / self.support[present]).mean()
