"""Binary metrics averaged over tasks the way OGB's ``Evaluator`` averages them."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor
from torchmetrics import Metric
from torchmetrics.utilities import dim_zero_cat

from graphbench.metrics.ranking import average_precision, roc_auc


class TaskwiseBinaryMetric(Metric):
    r"""Mean over tasks of a per-task binary metric, OGB style.

    For every task (column) :math:`t`, rows whose target is NaN are dropped; tasks whose remaining
    targets do not contain both classes are skipped; the result is the unweighted mean
    :math:`\frac{1}{|T|}\sum_{t \in T} m(\hat y_{:,t}, y_{:,t})` over the kept tasks :math:`T`.
    This is how ``ogb.graphproppred.Evaluator`` computes ``ap`` and ``rocauc`` (Hu et al., 2020),
    and how LRGB scores Peptides-func.
    """

    full_state_update = False
    is_differentiable = False

    def __init__(self, fn: Callable[[Tensor, Tensor], Tensor]) -> None:
        super().__init__()
        self.fn = fn
        self.add_state("preds", default=[], dist_reduce_fx="cat")
        self.add_state("target", default=[], dist_reduce_fx="cat")

    def update(self, preds: Tensor, target: Tensor) -> None:
        self.preds.append(preds.detach().float().reshape(preds.size(0), -1))
        self.target.append(target.detach().float().reshape(target.size(0), -1))

    def compute(self) -> Tensor:
        preds, target = dim_zero_cat(self.preds), dim_zero_cat(self.target)
        scores = []
        for t in range(target.size(1)):
            labelled = ~torch.isnan(target[:, t])
            y = target[labelled, t]
            if y.numel() == 0 or y.min() == y.max():
                continue
            scores.append(self.fn(preds[labelled, t], y))
        if not scores:
            raise RuntimeError("no task has both positive and negative labels; the metric is undefined")
        return torch.stack(scores).mean()


class OGBAveragePrecision(TaskwiseBinaryMetric):
    """Average precision (area under the step-wise precision-recall curve) averaged over tasks."""

    def __init__(self) -> None:
        super().__init__(average_precision)


class OGBROCAUC(TaskwiseBinaryMetric):
    """ROC-AUC averaged over tasks."""

    def __init__(self) -> None:
        super().__init__(roc_auc)
