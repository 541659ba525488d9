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

from graphbench.vocabulary.errors import ArgumentError


class MaskedBCEWithLogitsLoss(nn.Module):
    r"""Binary cross-entropy on logits over the labelled entries only: a NaN target means "not
    labelled" (OGB's ogbg-molpcba convention), :math:`\frac{1}{|L|}\sum_{(i,t) \in L}
    \mathrm{BCE}(z_{it}, y_{it})` with :math:`L = \{(i,t): y_{it} \neq \mathrm{NaN}\}`.

    The labelled entries are selected with a boolean mask, which makes the host wait for the device to
    count them (two syncs a step, one for the logits and one for the targets, allowed in tests/modules/test_task_module_host_syncs.py). Zeroing them
    instead gives the same loss in exact arithmetic but another float summation order, which moved the
    recorded reference numbers (tests/e2e/test_reference_numbers.py), so it waits for a decision."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        labelled = ~torch.isnan(target)
        return F.binary_cross_entropy_with_logits(logits[labelled], target[labelled])


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


class BatchWeightedCrossEntropyLoss(nn.Module):
    r"""Cross-entropy with each class :math:`c` weighted by the share of the batch's other nodes,
    :math:`w_c = (V - n_c) / V` for a class present in the batch (:math:`n_c > 0` of :math:`V` targets) and
    0 otherwise, averaged as :func:`~torch.nn.functional.cross_entropy` does with class weights
    (:math:`\sum_i w_{y_i} \ell_i / \sum_i w_{y_i}`): ``weighted_cross_entropy`` of GraphGPS and
    toenshoff/LRGB (``graphgps/loss/weighted_cross_entropy.py``), the loss of their PascalVOC-SP and
    COCO-SP configs."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        counts = torch.bincount(target, minlength=logits.size(-1)).to(logits.dtype)
        weight = (target.numel() - counts) / target.numel() * (counts > 0).to(logits.dtype)
        return F.cross_entropy(logits, target, weight=weight)


def pos_neg_bce(pos: Tensor, neg: Tensor) -> Tensor:
    r""":math:`-\mathrm{mean}\log\sigma(s^+) - \mathrm{mean}\log(1-\sigma(s^-))`: the loss of OGB's
    link-prediction examples over positive scores :math:`s^+` and sampled negative scores :math:`s^-`."""
    loss = F.binary_cross_entropy_with_logits(pos, torch.ones_like(pos))
    return loss + F.binary_cross_entropy_with_logits(neg, torch.zeros_like(neg)) if neg.numel() else loss


def sharpen(probabilities: Tensor, temperature: float) -> Tensor:
    r"""Sharpening (Feng et al. 2020, eq. 5; Berthelot et al. 2019's MixMatch):
    :math:`Z'_{ic} = Z_{ic}^{1/T} \big/ \sum_j Z_{ij}^{1/T}` over the last dimension of class
    probabilities :math:`Z`. :math:`T < 1` moves each row towards its arg-max, :math:`T = 1` keeps it."""
    powered = probabilities.pow(1.0 / temperature)
    return powered / powered.sum(dim=-1, keepdim=True)


class ConsistencyLoss(nn.Module):
    r"""GRAND's consistency regularization (Feng et al., NeurIPS 2020, "Graph Random Neural Network for
    Semi-Supervised Learning on Graphs", eqs. 5-6) over the logits of ``num_augmentations`` random forward
    passes :math:`s = 1..S` of the same batch: with :math:`\tilde Z^{(s)} = \mathrm{softmax}(\text{logits}^{(s)})`,
    the average :math:`\bar Z = \frac1S \sum_s \tilde Z^{(s)}` sharpened with ``temperature`` :math:`T`
    (:func:`sharpen`, no gradient through it),

    .. math::
        \lambda \, \mathcal L_{\mathrm{con}} = \lambda \, \frac1S \sum_{s=1}^{S} \frac1n \sum_{i=1}^{n}
        \big\lVert Z'_i - \tilde Z^{(s)}_i \big\rVert_2^2

    over all :math:`n` rows (nodes, labelled or not), :math:`\lambda` = ``weight``; as ``consis_loss`` of
    the authors' code (THUDM/GRAND, ``train_grand.py``). The task module adds it to the supervised loss
    averaged over the same :math:`S` passes (:class:`~graphbench.modules.task_module.GraphTaskModule`).
    """

    def __init__(self, num_augmentations: int, temperature: float, weight: float) -> None:
        super().__init__()
        if not isinstance(num_augmentations, int) or num_augmentations < 1:
            raise ArgumentError(f"num_augmentations={num_augmentations!r} must be a positive integer")
        if not temperature > 0:
            raise ArgumentError(f"temperature={temperature!r} must be positive (GRAND uses 0.1-0.5)")
        if not weight >= 0:
            raise ArgumentError(f"weight={weight!r} must be non-negative")
        self.num_augmentations = num_augmentations
        self.temperature = float(temperature)
        self.weight = float(weight)

    def forward(self, logits: list[Tensor]) -> Tensor:
        if len(logits) != self.num_augmentations:
            raise ValueError(f"ConsistencyLoss expects {self.num_augmentations} augmentations' logits, got {len(logits)}")
        probabilities = torch.stack([z.float().softmax(dim=-1) for z in logits])  # [S, n, C]
        target = sharpen(probabilities.mean(dim=0), self.temperature).detach()
        return self.weight * (probabilities - target).pow(2).sum(dim=-1).mean()
