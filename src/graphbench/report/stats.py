r"""Statistics over seeds: mean ± sample std, Welch's t-test vs the best group, rank stability.

For the runs :math:`x_1, \dots, x_n` of one group (one value per seed):

* mean :math:`\bar x = \frac1n \sum_i x_i`;
* **sample** standard deviation with Bessel's correction (``ddof=1``),
  :math:`s = \sqrt{\frac{1}{n-1} \sum_i (x_i - \bar x)^2}`, undefined (NaN) for
  :math:`n < 2`;
* significance vs the best group :math:`b` (highest or lowest mean ``test/<metric>``
  according to ``higher_is_better``): two-sided Welch's unequal-variances t-test
  (Welch, Biometrika 1947), :math:`t = (\bar x_b - \bar x_g) / \sqrt{s_b^2/n_b + s_g^2/n_g}`
  with Welch–Satterthwaite degrees of freedom
  :math:`\nu = (s_b^2/n_b + s_g^2/n_g)^2 / \big(\frac{(s_b^2/n_b)^2}{n_b-1} + \frac{(s_g^2/n_g)^2}{n_g-1}\big)`,
  computed by ``scipy.stats.ttest_ind(equal_var=False)``; a group is marked
  significantly different from the best when :math:`p < \alpha` (default 0.05);
* rank stability: the *inversion number* used by Li et al., "Rethinking the Setting of
  Semi-supervised Learning on Graphs" (IJCAI 2022, arXiv:2205.14403), the paper that
  introduces the IGB benchmark, to measure how much a benchmark's ranking of models
  changes with the random seed. See :func:`rank_stability`.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scipy import stats as scipy_stats

from graphbench.report.collect import Block, Group
from graphbench.report.literature import PaperValue, gap_in_std, paper_value

DEFAULT_ALPHA: float = 0.05


def mean(values: Sequence[float]) -> float:
    r"""Arithmetic mean :math:`\frac1n\sum_i x_i` of the finite values; NaN if there are none."""
    finite = [v for v in values if math.isfinite(v)]
    return math.fsum(finite) / len(finite) if finite else math.nan


def sample_std(values: Sequence[float]) -> float:
    r"""Sample std (``ddof=1``) :math:`\sqrt{\sum_i (x_i-\bar x)^2/(n-1)}` of the finite values; NaN if :math:`n<2`."""
    finite = [v for v in values if math.isfinite(v)]
    if len(finite) < 2:
        return math.nan
    centre = mean(finite)
    return math.sqrt(math.fsum((v - centre) ** 2 for v in finite) / (len(finite) - 1))


def welch_p_value(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of Welch's t-test of equal means; NaN when undefined (n < 2, zero variance)."""
    if len(a) < 2 or len(b) < 2:
        return math.nan
    if statistics.pvariance(a) == 0 and statistics.pvariance(b) == 0:
        return math.nan  # t is 0/0 or ±inf: the test says nothing about constant samples
    result = scipy_stats.ttest_ind(list(a), list(b), equal_var=False)
    p_value = float(result.pvalue)
    return p_value if math.isfinite(p_value) else math.nan


def count_discordant_pairs(x: Sequence[float], y: Sequence[float]) -> int:
    r"""Inversion number between the rankings induced by ``x`` and ``y`` over the same items.

    :math:`\#\{(i, j): i < j,\ (x_i - x_j)(y_i - y_j) < 0\}`: the number of item pairs
    ordered one way by ``x`` and the other way by ``y`` — Kendall's tau distance, i.e.
    the number of adjacent swaps turning one ranking into the other. A pair tied in
    either ranking is not discordant. The direction of "better" does not matter.
    """
    if len(x) != len(y):
        raise ValueError(f"rankings have different lengths: {len(x)} != {len(y)}")
    return sum(1 for i, j in itertools.combinations(range(len(x)), 2) if (x[i] - x[j]) * (y[i] - y[j]) < 0)


@dataclass(frozen=True)
class RankStability:
    """Inversion numbers between per-seed rankings of the groups, over all pairs of seeds."""

    seeds: tuple[int, ...]
    n_groups: int
    mean_inversions: float
    max_inversions: int
    max_possible: int
    reason: str | None = None

    @property
    def n_seed_pairs(self) -> int:
        """:math:`\\binom{|S|}{2}` pairs of shared seeds."""
        return len(self.seeds) * (len(self.seeds) - 1) // 2


def rank_stability(per_seed: Sequence[Mapping[int, float]]) -> RankStability:
    r"""IGB rank stability of groups across seeds (Li et al., IJCAI 2022).

    ``per_seed[g][s]`` is group ``g``'s test metric with seed ``s``. Only seeds
    :math:`S` present in *every* group are used. For each seed :math:`s \in S` the groups
    are ranked by their metric; for each pair of seeds :math:`\{s, t\}` the inversion
    number :math:`I(s, t)` is the number of discordant pairs of groups between the two
    rankings (:func:`count_discordant_pairs`). Reported: the mean and the maximum of
    :math:`I` over the :math:`\binom{|S|}{2}` seed pairs, out of at most
    :math:`\binom{G}{2}` for :math:`G` groups. 0 means every seed ranks the groups alike.
    """
    n_groups = len(per_seed)
    shared = sorted(set.intersection(*(set(values) for values in per_seed))) if per_seed else []
    max_possible = n_groups * (n_groups - 1) // 2
    if n_groups < 2 or len(shared) < 2:
        reason = f"needs >= 2 groups and >= 2 seeds shared by every group; {n_groups} group(s), shared seeds {shared}"
        return RankStability(tuple(shared), n_groups, math.nan, 0, max_possible, reason)
    columns = {seed: [values[seed] for values in per_seed] for seed in shared}
    inversions = [count_discordant_pairs(columns[s], columns[t]) for s, t in itertools.combinations(shared, 2)]
    return RankStability(tuple(shared), n_groups, mean(inversions), max(inversions), max_possible)


@dataclass(frozen=True)
class GroupSummary:
    """One table row: a group's statistics over its runs."""

    label: str
    n: int
    seeds: tuple[int | None, ...]
    test_mean: float
    test_std: float
    val_mean: float
    val_std: float
    num_params: float
    num_params_equal: bool
    time_per_epoch_s: float
    best_epoch: float
    p_value: float
    significant: bool
    is_best: bool
    paper: PaperValue | None = None
    paper_gap_std: float = math.nan


@dataclass(frozen=True)
class BlockSummary:
    """A block's rows (best first), its rank stability and notes (e.g. repeated seeds)."""

    block: Block
    rows: list[GroupSummary]
    rank: RankStability
    alpha: float
    notes: list[str]


def _per_seed(group: Group, key: str) -> dict[int, float]:
    """``{seed: value}``; runs repeating a seed are averaged, runs without a seed skipped."""
    by_seed: dict[int, list[float]] = {}
    for run in group.runs:
        if run.seed is not None:
            by_seed.setdefault(run.seed, []).append(run.value(key))
    return {seed: mean(values) for seed, values in by_seed.items()}


def summarize_block(block: Block, alpha: float = DEFAULT_ALPHA) -> BlockSummary:
    """Statistics of every group of ``block``; rows sorted best first (ties by label)."""
    test_key, val_key = f"test/{block.metric}", f"val/{block.metric}"
    tests = [[run.value(test_key) for run in group.runs] for group in block.groups]
    means = [mean(values) for values in tests]
    sign = -1.0 if block.higher_is_better else 1.0
    order = sorted(range(len(block.groups)), key=lambda i: (sign * means[i], block.groups[i].label))
    best = order[0]
    rows: list[GroupSummary] = []
    notes: list[str] = []
    for i in order:
        group = block.groups[i]
        params = [run.value("num_params") for run in group.runs]
        finite_params = {p for p in params if math.isfinite(p)}
        p_value = math.nan if i == best else welch_p_value(tests[best], tests[i])
        seeds = [run.seed for run in group.runs]
        repeated = sorted({s for s in seeds if s is not None and seeds.count(s) > 1})
        paper = paper_value(group.runs[0].config, block.metric)
        test_std = sample_std(tests[i])
        if repeated:
            notes.append(f"{group.label}: seeds {repeated} occur more than once (averaged for rank stability)")
        rows.append(
            GroupSummary(
                label=group.label,
                n=len(group.runs),
                seeds=tuple(seeds),
                test_mean=means[i],
                test_std=test_std,
                val_mean=mean([run.value(val_key) for run in group.runs]),
                val_std=sample_std([run.value(val_key) for run in group.runs]),
                num_params=mean(params),
                num_params_equal=len(finite_params) <= 1,
                time_per_epoch_s=mean([run.value("time_per_epoch_s") for run in group.runs]),
                best_epoch=mean([run.value("best_epoch") for run in group.runs]),
                p_value=p_value,
                significant=math.isfinite(p_value) and p_value < alpha,
                is_best=i == best,
                paper=paper,
                paper_gap_std=gap_in_std(means[i], test_std, paper),
            )
        )
    rank = rank_stability([_per_seed(group, test_key) for group in block.groups])
    return BlockSummary(block=block, rows=rows, rank=rank, alpha=alpha, notes=notes)
