r"""Training losses that PyTorch does not ship; a dataset's YAML names its loss (``dataset.module.loss``)
with ``_target_``, e.g. ``torch.nn.L1Loss`` (ZINC, Peptides-struct), ``torch.nn.CrossEntropyLoss``
(multiclass), ``torch.nn.MSELoss`` (GraphTheoryProp) or one of these.

Every loss is called as ``loss(prediction, target)``: for multiclass tasks the prediction is
``[N, C]`` logits and the target ``[N]`` class indices; otherwise both have the prediction's shape and
the target is float.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn import functional as F


class MaskedBCEWithLogitsLoss(nn.Module):
    r"""Binary cross-entropy on logits over the labelled entries only: a NaN target means "not
    labelled" (OGB's ogbg-molpcba convention), :math:`\frac{1}{|L|}\sum_{(i,t) \in L}
    \mathrm{BCE}(z_{it}, y_{it})` with :math:`L = \{(i,t): y_{it} \neq \mathrm{NaN}\}`.

    The unlabelled entries are zeroed, not selected (a boolean-mask selection makes the host wait for
    the device to count them): the loss is the same, with no host-device sync in the step."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        labelled = ~torch.isnan(target)
        losses = F.binary_cross_entropy_with_logits(logits, torch.where(labelled, target, 0.0), reduction="none")
        return torch.where(labelled, losses, 0.0).sum() / labelled.sum()


class BalancedBCEWithLogitsLoss(nn.Module):
    r"""Binary cross-entropy with each class weighted by the other's frequency in the batch,
    :math:`w_1 = n_0/n`, :math:`w_0 = n_1/n`, normalised by :math:`\sum_i w_{y_i}` (the class-weighted
    cross-entropy of Benchmarking GNNs' TSP edge classification). Unweighted when only one class is
    present."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logits, target = logits.reshape(-1), target.reshape(-1)
        losses = F.binary_cross_entropy_with_logits(logits, target, reduction="none")
        n_pos = target.sum()
        if n_pos == 0 or n_pos == target.numel():
            return losses.mean()
        weight = torch.where(target > 0.5, (target.numel() - n_pos) / target.numel(), n_pos / target.numel())
        return (weight * losses).sum() / weight.sum()


def pos_neg_bce(pos: Tensor, neg: Tensor) -> Tensor:
    r""":math:`-\mathrm{mean}\log\sigma(s^+) - \mathrm{mean}\log(1-\sigma(s^-))`: the loss of OGB's
    link-prediction examples over positive scores :math:`s^+` and sampled negative scores :math:`s^-`."""
    loss = F.binary_cross_entropy_with_logits(pos, torch.ones_like(pos))
    return loss + F.binary_cross_entropy_with_logits(neg, torch.zeros_like(neg)) if neg.numel() else loss
