"""Mean reciprocal rank of link prediction, raw, filtered and extended-filtered (Tönshoff et al., 2023)."""

from __future__ import annotations

import torch
from torch import Tensor
from torchmetrics import Metric
from torchmetrics.utilities import dim_zero_cat

MRR_VARIANTS: dict[str, str] = {"raw": "", "filtered": "_filtered", "ext_filtered": "_ext_filtered"}
HITS_AT: tuple[int, ...] = (1, 3, 10)
#: the names a dataset's YAML may monitor
MRR_METRICS: tuple[str, ...] = tuple(f"mrr{suffix}" for suffix in MRR_VARIANTS.values())


def link_ranks(scores: Tensor, valid: Tensor, tail: Tensor, head: Tensor, true_tails: Tensor) -> dict[str, Tensor]:
    r"""Rank of each query's true tail among candidate tails, in the three settings of Tönshoff et al.
    (2023, "Where Did the Gap Go?", the PCQM-Contact metric).

    Query :math:`q = (h, t)` is a positive pair; row ``q`` of ``scores`` [Q, C] holds the scores of
    :math:`(h, v)` for every candidate column :math:`v` (every node of :math:`h`'s graph; ``valid``
    marks real columns, the rest is padding). ``tail``/``head`` [Q] are the columns of :math:`t` and
    :math:`h`; ``true_tails`` [Q, C] marks every true tail of :math:`h` (all positives sharing the head).

    * raw: every node but :math:`t` itself competes, the other true tails and :math:`h` included;
    * filtered: the other true tails of :math:`h` are removed from the candidates;
    * extended filtered (``ext_filtered``): the self-loop :math:`(h, h)` is removed as well.

    The rank is :math:`1 + |\{v : s_v > s_t\}| + \tfrac12 |\{v : s_v = s_t\}|` over the candidates
    (ties count half, as OGB's MRR evaluator averages its optimistic and pessimistic ranks).
    """
    columns = torch.arange(scores.size(1), device=scores.device).unsqueeze(0)
    own_tail = columns == tail.unsqueeze(1)
    self_loop = columns == head.unsqueeze(1)
    candidates = {
        "raw": valid & ~own_tail,
        "filtered": valid & ~(true_tails | own_tail),
        "ext_filtered": valid & ~(true_tails | own_tail | self_loop),
    }
    positive = scores.gather(1, tail.view(-1, 1))
    higher, tied = scores > positive, scores == positive
    return {
        variant: 1.0 + (higher & cand).sum(dim=1).double() + 0.5 * (tied & cand).sum(dim=1).double()
        for variant, cand in candidates.items()
    }


def _mean_per_group(values: Tensor, groups: Tensor) -> Tensor:
    """Mean of ``values`` within each group, then the mean over groups."""
    _, inverse = torch.unique(groups, return_inverse=True)
    count = torch.bincount(inverse).double()
    total = torch.zeros_like(count).index_add_(0, inverse, values.double())
    return (total / count).mean()


class LinkRankingMetric(Metric):
    r"""MRR and Hits@{1,3,10} of link prediction in the raw, filtered and extended-filtered settings
    (see :func:`link_ranks`): ``mrr``, ``mrr_filtered``, ``mrr_ext_filtered``, ``hits@1``,
    ``hits@1_filtered``, ... Each is averaged over the queries of a graph, then over graphs (the
    implementation of Tönshoff et al., 2023). :meth:`compute` returns ``monitor``, :meth:`compute_all`
    every value."""

    full_state_update = False
    is_differentiable = False
    higher_is_better = True

    def __init__(self, monitor: str = "mrr_filtered") -> None:
        super().__init__()
        if monitor not in MRR_METRICS:
            raise ValueError(f"monitor {monitor!r} is not one of {list(MRR_METRICS)}")
        self.monitor = monitor
        for variant in MRR_VARIANTS:
            self.add_state(f"ranks_{variant}", default=[], dist_reduce_fx="cat")
        self.add_state("groups", default=[], dist_reduce_fx="cat")

    def update(self, ranks: dict[str, Tensor], groups: Tensor) -> None:
        """``ranks``: :func:`link_ranks`' output; ``groups`` [Q]: a graph id per query, unique per graph."""
        for variant in MRR_VARIANTS:
            getattr(self, f"ranks_{variant}").append(ranks[variant].detach().double())
        self.groups.append(groups.detach().long())

    def compute_all(self) -> dict[str, Tensor]:
        groups = dim_zero_cat(self.groups)
        if groups.numel() == 0:
            raise RuntimeError("LinkRankingMetric: no positive pairs were ranked")
        out = {}
        for variant, suffix in MRR_VARIANTS.items():
            ranks = dim_zero_cat(getattr(self, f"ranks_{variant}"))
            out[f"mrr{suffix}"] = _mean_per_group(1.0 / ranks, groups).float()
            for k in HITS_AT:
                out[f"hits@{k}{suffix}"] = _mean_per_group((ranks <= k).double(), groups).float()
        return out

    def compute(self) -> Tensor:
        return self.compute_all()[self.monitor]
