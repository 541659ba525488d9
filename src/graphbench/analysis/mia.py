r"""Membership inference on the nodes of one graph with the likelihood-ratio attack (LiRA; Carlini et
al., "Membership Inference Attacks From First Principles", IEEE S&P 2022): ``python run.py task=mia``.

**Candidate pool.** :math:`P` = the training nodes of the dataset's configured split, which under a
60/20/20 split are NCMemo's training candidates (Jamadandi et al., "Memorization in Graph Neural
Networks": the 60% that its shared, candidate and independent sets :math:`S_S \cup S_C \cup S_I` are
cut from; syn-cora's default split is the study's per-class 60/20/20 one, other one-graph datasets
take ``dataset.split=random``). The validation nodes select every model's best epoch; the test nodes
are never trained on.

**Shadow models.** :math:`K` models (``num_shadows``, even, :math:`\ge 6`), model :math:`k` trained on
:math:`P_k \subset P` by :func:`graphbench.analysis.subset_training.train_on_nodes`. Membership is
drawn as in Carlini et al.'s code (:func:`shadow_membership`): every node is IN exactly :math:`K/2`
models, so each model trains on a random half of :math:`P`.

**Attack.** For model :math:`k` and node :math:`v` with label :math:`y_v` and softmax output
:math:`p`, the logit-scaled confidence (:func:`logit_confidence`)

.. math::
    \phi_k(v) = \log \frac{p_y}{1 - p_y} = \log p_y - \log \sum_{c \ne y} p_c .

Each model in turn is the target :math:`t` (leave-one-shadow-out, as Carlini et al. evaluate): per
node, Gaussians are fitted to :math:`\phi` of :math:`K/2 - 1` other models that had :math:`v` IN
(:math:`\mu_{in}, \sigma_{in}`) and as many that had it OUT (:math:`\mu_{out}, \sigma_{out}`)
(:func:`fit_gaussians`, :func:`leave_one_out_scores`), and the target's membership score is the
online log-likelihood ratio (:func:`online_score`)

.. math::
    \Lambda_t(v) = \log \mathcal N(\phi_t(v); \mu_{in}, \sigma_{in}^2)
                 - \log \mathcal N(\phi_t(v); \mu_{out}, \sigma_{out}^2),

or, offline (OUT models only; :func:`offline_score`), the one-sided
:math:`\log \Pr[Z \le \phi_t(v)]` with :math:`Z \sim \mathcal N(\mu_{out}, \sigma_{out}^2)`.
The :math:`K |P|` (score, membership) pairs of all targets make one ROC curve (:func:`roc_summary`):
ROC-AUC and the TPR at 1% FPR, the number Carlini et al. argue for.
"""

from __future__ import annotations

import csv
import logging
import math
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor
from torchmetrics.functional.classification import binary_auroc, binary_roc

from graphbench.vocabulary.errors import ConfigError

log = logging.getLogger(__name__)

#: the floor of a fitted standard deviation (Carlini et al.'s code adds 1e-30), so that a node whose
#: shadow confidences coincide still has a finite likelihood
MIN_STD: float = 1e-30
#: the false-positive rate at which the TPR is reported
LOW_FPR: float = 0.01


def shadow_membership(num_shadows: int, pool_size: int, seed: int) -> Tensor:
    """``keep[k, i]``: whether pool node ``i`` is in shadow model ``k``'s training set, ``[K, |P|]``.
    Each node is IN exactly ``K/2`` models, drawn independently per node (Carlini et al.'s code:
    the ranks of uniform numbers over the models, ``keep = rank < K/2``)."""
    if num_shadows < 6 or num_shadows % 2:
        raise ConfigError(
            f"task.num_shadows={num_shadows} is not valid: LiRA needs an even number >= 6 of shadow models "
            "(each node IN half of them, and Gaussians of at least 2 models per side after leaving a target out)"
        )
    if pool_size < 2:
        raise ConfigError(f"the candidate pool has {pool_size} node(s); membership inference needs at least 2")
    uniform = torch.rand(num_shadows, pool_size, generator=torch.Generator().manual_seed(seed))
    ranks = uniform.argsort(dim=0).argsort(dim=0)
    return ranks < num_shadows // 2


def logit_confidence(probs: Tensor, labels: Tensor) -> Tensor:
    r""":math:`\phi = \log p_y - \log \sum_{c \ne y} p_c` of each row of ``probs`` (``[..., N, C]``) at
    its label ``labels`` (``[N]``), in float64. Summing the other classes keeps precision where
    :math:`1 - p_y` would round to 0 (Carlini et al. compute it the same way); both terms are
    floored at the smallest positive number of ``probs``' dtype, so the result stays finite."""
    tiny = torch.finfo(probs.dtype).tiny
    probs = probs.double()
    index = labels.long().view(*([1] * (probs.dim() - 2)), -1, 1).expand(*probs.shape[:-1], 1)
    true = probs.gather(-1, index).squeeze(-1)
    others = probs.scatter(-1, index, 0.0).sum(dim=-1)
    return true.clamp_min(tiny).log() - others.clamp_min(tiny).log()


@dataclass
class GaussianFits:
    """Per-node Gaussians of the shadow confidences: ``[N]`` each."""

    mean_in: Tensor
    std_in: Tensor
    mean_out: Tensor
    std_out: Tensor


def _fit(phi: Tensor, member: Tensor) -> tuple[Tensor, Tensor]:
    count = member.sum(dim=0)
    if bool((count == 0).any()):
        raise ConfigError("a node has no shadow model on one side (IN or OUT) to fit a Gaussian to; use more shadow models")
    weights = member.double()
    mean = (weights * phi).sum(dim=0) / count
    var = (weights * (phi - mean) ** 2).sum(dim=0) / count
    return mean, var.sqrt()


def fit_gaussians(phi: Tensor, keep: Tensor, global_variance: bool = False, used: Tensor | None = None) -> GaussianFits:
    r"""Maximum-likelihood Gaussians of ``phi`` (``[M, N]``: models x nodes) over the models with
    ``keep`` (IN) and without (OUT), per node, counting only the entries where ``used`` (all when
    ``None``): the mean and the population standard deviation (``ddof=0``, as ``np.std`` in Carlini et
    al.'s code, which takes the median for the mean). With ``global_variance`` each side's standard
    deviation is the pooled one over all nodes, which Carlini et al. recommend with few shadow models
    (they use it below 64)."""
    keep = keep.bool()
    used = torch.ones_like(keep) if used is None else used.bool()
    mean_in, std_in = _fit(phi, keep & used)
    mean_out, std_out = _fit(phi, ~keep & used)
    if global_variance:
        std_in = ((phi - mean_in)[keep & used] ** 2).mean().sqrt().expand_as(std_in)
        std_out = ((phi - mean_out)[~keep & used] ** 2).mean().sqrt().expand_as(std_out)
    return GaussianFits(mean_in, std_in.clamp_min(MIN_STD), mean_out, std_out.clamp_min(MIN_STD))


def gaussian_log_density(x: Tensor, mean: Tensor, std: Tensor) -> Tensor:
    r""":math:`\log \mathcal N(x; \mu, \sigma^2) = -\tfrac12 ((x-\mu)/\sigma)^2 - \log\sigma - \tfrac12\log 2\pi`."""
    return -0.5 * ((x - mean) / std) ** 2 - std.log() - 0.5 * math.log(2 * math.pi)


def online_score(phi: Tensor, fits: GaussianFits) -> Tensor:
    r"""Online LiRA: :math:`\log \mathcal N(\phi; \mu_{in}, \sigma_{in}^2) - \log \mathcal N(\phi; \mu_{out}, \sigma_{out}^2)`; higher means member."""
    return gaussian_log_density(phi, fits.mean_in, fits.std_in) - gaussian_log_density(phi, fits.mean_out, fits.std_out)


def offline_score(phi: Tensor, fits: GaussianFits) -> Tensor:
    r"""Offline LiRA (Carlini et al., Sec. IV-C): the one-sided :math:`\log \Pr[Z \le \phi]`,
    :math:`Z \sim \mathcal N(\mu_{out}, \sigma_{out}^2)`; higher means member."""
    return torch.special.log_ndtr((phi - fits.mean_out) / fits.std_out)


def leave_one_out_scores(phi: Tensor, keep: Tensor, global_variance: bool = False, offline: bool = False) -> Tensor:
    """``[K, N]``: the LiRA score of every model ``t`` as the target (``phi``: ``[K, N]`` confidences,
    ``keep``: ``[K, N]`` membership, each node IN ``K/2`` models), from Gaussians fitted to the other
    models, ``K/2 - 1`` on each side per node.

    Leaving ``t`` out leaves ``K/2 - 1`` models on ``t``'s own side of node ``v`` and ``K/2`` on the
    other; the first model after ``t`` (cyclically) on the other side is left out too. Unequal counts
    would bias the attack: under identical IN and OUT distributions a member's own-side fit would
    always be the smaller, hence the narrower one (``ddof=0``), and the AUC would fall below 1/2
    (0.42 with ``K = 8``)."""
    if phi.shape != keep.shape or phi.dim() != 2:
        raise ValueError(f"phi and keep must both be [models, nodes], got {tuple(phi.shape)} and {tuple(keep.shape)}")
    num_models, num_nodes = phi.shape
    keep = keep.bool()
    if bool((keep.sum(0) * 2 != num_models).any()):
        raise ValueError("leave_one_out_scores needs every node IN exactly half of the models (shadow_membership)")
    phi = phi.double()
    scores = torch.empty_like(phi)
    nodes = torch.arange(num_nodes, device=phi.device)
    for target in range(num_models):
        after = (target + 1 + torch.arange(num_models - 1, device=phi.device)) % num_models
        other_side = keep[after] != keep[target]
        dropped = after[other_side.long().argmax(dim=0)]  # the first model after the target on the other side
        used = torch.ones_like(keep)
        used[target] = False
        used[dropped, nodes] = False
        fits = fit_gaussians(phi, keep, global_variance, used)
        scores[target] = (offline_score if offline else online_score)(phi[target], fits)
    return scores


def _ranks(scores: Tensor) -> Tensor:
    """Dense ranks scaled into [0, 1]: the same order and ties as ``scores``. torchmetrics reads scores
    outside [0, 1] as logits and applies a sigmoid, which in float32 would tie large log-likelihood ratios."""
    _, inverse = torch.unique(scores, sorted=True, return_inverse=True)
    return inverse.double() / max(int(inverse.max()), 1)


def roc_summary(scores: Tensor, members: Tensor, low_fpr: float = LOW_FPR) -> dict[str, float]:
    """ROC-AUC of ``scores`` (higher: member) against the boolean ``members``, and the largest TPR at a
    threshold whose FPR is at most ``low_fpr`` (torchmetrics' exact ROC, every threshold)."""
    scores, members = scores.reshape(-1), members.reshape(-1).long()
    if bool(scores.isnan().any()):
        raise ValueError("membership scores contain NaN")
    if members.min() == members.max():
        raise ValueError("the ROC needs both members and non-members")
    preds = _ranks(scores)
    fpr, tpr, _ = binary_roc(preds, members)
    return {
        "auc": float(binary_auroc(preds, members)),
        "tpr_at_low_fpr": float(tpr[fpr <= low_fpr].max()),
    }


def write_node_csv(path: Path, nodes: Tensor, labels: Tensor, degrees: Tensor, phi: Tensor, keep: Tensor, scores: Tensor) -> None:
    """One row per pool node: its IN/OUT counts, the mean and std of its shadow confidences IN and OUT
    (all ``K`` models), and its mean leave-one-out LiRA score as a member and as a non-member."""
    fits = fit_gaussians(phi.double(), keep)
    keep_d = keep.double()
    score_in = (scores * keep_d).sum(0) / keep_d.sum(0)
    score_out = (scores * (1 - keep_d)).sum(0) / (1 - keep_d).sum(0)
    columns = {
        "node": nodes,
        "label": labels,
        "degree": degrees,
        "num_in": keep.sum(0),
        "num_out": (~keep).sum(0),
        "phi_in_mean": fits.mean_in,
        "phi_in_std": fits.std_in,
        "phi_out_mean": fits.mean_out,
        "phi_out_std": fits.std_out,
        "score_in_mean": score_in,
        "score_out_mean": score_out,
    }
    with Path(path).open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for row in zip(*(values.tolist() for values in columns.values())):
            writer.writerow(row)


#: the per-node table and the raw shadow confidences, in the run directory
NODE_CSV: str = "mia.csv"
CONFIDENCES_FILE: str = "mia_confidences.pt"
