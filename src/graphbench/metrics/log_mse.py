"""The multitask score of PNA's GraphTheoryProp benchmark (Corso et al., 2020)."""

from __future__ import annotations

import torch
from torch import Tensor
from torchmetrics import Metric


class LogMSE(Metric):
    r"""Mean over tasks of the base-10 logarithm of each task's mean squared error:

    .. math:: \frac{1}{T} \sum_{t=1}^{T} \log_{10}\Big(\frac{1}{N} \sum_{i=1}^{N} (\hat y_{it} - y_{it})^2\Big)

    for predictions and targets of shape [N, T] with ``T = num_tasks``. Lower is better. Each task's
    MSE is accumulated over the whole epoch before the logarithm is taken, so the value does not
    depend on the batch size.
    """

    full_state_update = False
    is_differentiable = False
    higher_is_better = False

    def __init__(self, num_tasks: int) -> None:
        super().__init__()
        if num_tasks < 1:
            raise ValueError(f"num_tasks must be positive, got {num_tasks}")
        self.num_tasks = num_tasks
        self.add_state("sum_squared_error", default=torch.zeros(num_tasks), dist_reduce_fx="sum")
        self.add_state("count", default=torch.tensor(0, dtype=torch.long), dist_reduce_fx="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        preds = preds.detach().float().reshape(preds.size(0), -1)
        target = target.detach().float().reshape(preds.shape)
        if preds.size(1) != self.num_tasks:
            raise ValueError(f"LogMSE expects {self.num_tasks} tasks per row, got {preds.size(1)}")
        self.sum_squared_error += ((preds - target) ** 2).sum(dim=0)
        self.count += preds.size(0)

    def compute(self) -> Tensor:
        if int(self.count) == 0:
            raise RuntimeError("LogMSE.compute() called before any update")
        return torch.log10(self.sum_squared_error / self.count).mean()
