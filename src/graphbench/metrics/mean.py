"""The epoch loss: a weighted mean of per-batch values that keeps a NaN and never reads the device."""

from __future__ import annotations

import torch
from torch import Tensor
from torchmetrics import Metric


class WeightedMean(Metric):
    r""":math:`\bar x = \sum_b w_b x_b \,/\, \sum_b w_b` over the updates ``(x_b, w_b)`` of an epoch (a
    batch's mean loss and its number of examples), reduced over DDP ranks by summing both sums.

    A NaN value makes the mean NaN, which is what :class:`~graphbench.callbacks.divergence.DivergenceGuard`
    stops on. torchmetrics' ``MeanMetric`` does not fit: under ``nan_strategy="disable"`` (torchmetrics
    1.9) it replaces the weights by ones, and its other strategies test every update for NaNs on the host,
    a device sync per training step.
    """

    full_state_update = False
    is_differentiable = False
    higher_is_better = None

    def __init__(self) -> None:
        super().__init__()
        self.add_state("weighted_sum", default=torch.tensor(0.0), dist_reduce_fx="sum")
        self.add_state("weight", default=torch.tensor(0.0), dist_reduce_fx="sum")

    def update(self, value: Tensor, weight: float | Tensor = 1.0) -> None:
        value = value.detach().float()
        weights = torch.broadcast_to(torch.as_tensor(weight, dtype=torch.float32, device=value.device), value.shape)
        self.weighted_sum += (value * weights).sum()
        self.weight += weights.sum()

    def compute(self) -> Tensor:
        return self.weighted_sum / self.weight
