r"""Statistics over replicates: mean ± sample std, Holm-corrected Welch tests vs the best group, rank stability.

A group's *replicates* are its runs: one per seed, or one per (fold, seed) when the dataset has
folds (``dataset.split_index``; see :mod:`~graphbench.report.collect`). For the values
:math:`x_1, \dots, x_n` of one group (:math:`n` = folds × seeds):

* mean :math:`\bar x = \frac1n \sum_i x_i`;
* **sample** standard deviation with Bessel's correction (``ddof=1``),
  :math:`s = \sqrt{\frac{1}{n-1} \sum_i (x_i - \bar x)^2}`, undefined (NaN) for
  :math:`n < 2`;
* significance vs the best group :math:`b` (highest or lowest mean ``test/<metric>``
  according to ``higher_is_better``): two-sided Welch's unequal-variances t-test
  (Welch, Biometrika 1947), :math:`t = (\bar x_b - \bar x_g) / \sqrt{s_b^2/n_b + s_g^2/n_g}`
  with Welch–Satterthwaite degrees of freedom
  :math:`\nu = (s_b^2/n_b + s_g^2/n_g)^2 / \big(\frac{(s_b^2/n_b)^2}{n_b-1} + \frac{(s_g^2/n_g)^2}{n_g-1}\big)`,
  computed by ``scipy.stats.ttest_ind(equal_var=False)``. The :math:`m` tests of a block
  (every group against the best) are corrected together by Holm's step-down procedure
  (:func:`holm`), and a group is marked significantly different from the best when its
  Holm-adjusted :math:`p < \alpha` (default 0.05): the chance of any false "significant"
  in the table is then at most :math:`\alpha`. Folds share their data, so the runs of
  one group are not fully independent; the test treats them as if they were, as the
  literature's mean ± std over folds does.
* rank stability across seeds (:func:`rank_stability`): IGB's inversion number (Li et al.,
  "Rethinking the Setting of Semi-supervised Learning on Graphs", IJCAI 2022,
  arXiv:2205.14403) and the all-pairs inversion number.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scipy import stats as scipy_stats

from graphbench.report.collect import Block, Group
from graphbench.report.literature import PaperValue, RecipeCard, gap_in_std, paper_value, recipe_card

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


def holm(p_values: Sequence[float]) -> list[float]:
    r"""Holm's step-down adjusted p-values (Holm, Scand. J. Statist. 1979); NaN entries stay NaN.

    With the :math:`m` finite p-values sorted, :math:`p_{(1)} \le \dots \le p_{(m)}`, the adjusted
    value is :math:`\tilde p_{(i)} = \max_{j \le i} \min(1, (m - j + 1)\, p_{(j)})`; rejecting where
    :math:`\tilde p < \alpha` keeps the family-wise error rate at most :math:`\alpha`. Written out
    here (statsmodels' ``multipletests(method="holm")`` computes the same) to avoid a dependency.
    """
    finite = sorted((p, i) for i, p in enumerate(p_values) if math.isfinite(p))
    adjusted = [math.nan] * len(p_values)
    running = 0.0
    for rank, (p_value, index) in enumerate(finite):
        running = max(running, min(1.0, (len(finite) - rank) * p_value))
        adjusted[index] = running
    return adjusted


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
    """Inversion numbers between the per-seed rankings of a block's groups.

    ``igb_inversions``: IGB's inversion number, the inversions of every other seed's ranking
    against the ``reference_seed``'s, summed. ``mean_inversions`` / ``max_inversions``: the
    all-pairs inversion number, mean and maximum over all pairs of seeds.
    """

    seeds: tuple[int, ...]
    n_groups: int
    mean_inversions: float
    max_inversions: int
    max_possible: int
    reason: str | None = None
    reference_seed: int | None = None
    igb_inversions: int = 0

    @property
    def n_seed_pairs(self) -> int:
        """:math:`\\binom{|S|}{2}` pairs of shared seeds."""
        return len(self.seeds) * (len(self.seeds) - 1) // 2

    @property
    def igb_max_possible(self) -> int:
        """The largest IGB inversion number: every other seed reverses the reference, :math:`(|S|-1)\\binom{G}{2}`."""
        return max(len(self.seeds) - 1, 0) * self.max_possible


def igb_inversion_number(rankings: Mapping[int, Sequence[float]], reference_seed: int) -> int:
    r"""IGB's inversion number (Li et al., IJCAI 2022): :math:`\sum_{s \ne r} I(r, s)`.

    ``rankings[s]`` holds every group's metric under seed ``s`` (the same groups in the same
    order for every seed); the ranking of seed :math:`r` (``reference_seed``) is the reference
    and :math:`I(r, s)` is the number of group pairs seed :math:`s` orders the other way
    (:func:`count_discordant_pairs`). Example: seeds 0, 1, 2 rank three models A > B > C,
    B > A > C and C > B > A; with seed 0 as reference :math:`I(0,1) = 1` (A, B) and
    :math:`I(0,2) = 3` (every pair), so the number is 4.
    """
    if reference_seed not in rankings:
        raise ValueError(f"reference seed {reference_seed} is not among the seeds {sorted(rankings)}")
    reference = rankings[reference_seed]
    return sum(count_discordant_pairs(reference, values) for seed, values in rankings.items() if seed != reference_seed)


def rank_stability(per_seed: Sequence[Mapping[int, float]], reference_seed: int | None = None) -> RankStability:
    r"""Rank stability of groups across seeds: IGB's and the all-pairs inversion number.

    ``per_seed[g][s]`` is group ``g``'s test metric with seed ``s``. Only seeds :math:`S`
    present in *every* group are used. For each seed :math:`s \in S` the groups are ranked by
    their metric, and :math:`I(s, t)` is the number of group pairs that seeds :math:`s` and
    :math:`t` rank in opposite order (:func:`count_discordant_pairs`); at most
    :math:`\binom{G}{2}` for :math:`G` groups.

    * IGB's inversion number (Li et al., IJCAI 2022): :math:`\sum_{s \in S, s \ne r} I(r, s)` for
      the reference seed :math:`r` (``reference_seed``, by default the smallest seed of :math:`S`);
      see :func:`igb_inversion_number`. It grows with the number of seeds.
    * The all-pairs inversion number: the mean and the maximum of :math:`I` over the
      :math:`\binom{|S|}{2}` seed pairs; it does not depend on a reference seed.

    0 means every seed ranks the groups alike.
    """
    n_groups = len(per_seed)
    shared = sorted(set.intersection(*(set(values) for values in per_seed))) if per_seed else []
    max_possible = n_groups * (n_groups - 1) // 2
    if n_groups < 2 or len(shared) < 2:
        reason = f"needs >= 2 groups and >= 2 seeds shared by every group; {n_groups} group(s), shared seeds {shared}"
        return RankStability(tuple(shared), n_groups, math.nan, 0, max_possible, reason)
    reference = shared[0] if reference_seed is None else reference_seed
    if reference not in shared:
        raise ValueError(f"reference seed {reference} is not a seed every group has; valid: {shared}")
    columns = {seed: [values[seed] for values in per_seed] for seed in shared}
    inversions = [count_discordant_pairs(columns[s], columns[t]) for s, t in itertools.combinations(shared, 2)]
    igb = igb_inversion_number(columns, reference)
    return RankStability(tuple(shared), n_groups, mean(inversions), max(inversions), max_possible, None, reference, igb)


@dataclass(frozen=True)
class GroupSummary:
    """One table row: a group's statistics over its runs (its folds × seeds).

    ``p_value`` is Welch's p against the best group, ``p_holm`` the same Holm-adjusted over the
    block's tests; ``significant`` is ``p_holm < alpha``. ``seeds`` and ``folds`` list each run's
    seed and fold (``""`` without one) in run order. ``recipe``: the recipe card of the group's config
    (its first run's), when it has one.
    """

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
    folds: tuple[str, ...] = ()
    p_holm: float = math.nan
    recipe: RecipeCard | None = None

    @property
    def n_seeds(self) -> int:
        """The number of distinct seeds among the runs (a run without a seed counts as one)."""
        return len(set(self.seeds))

    @property
    def n_folds(self) -> int:
        """The number of distinct folds among the runs (1 for a dataset without folds)."""
        return max(len(set(self.folds)), 1)


@dataclass(frozen=True)
class BlockSummary:
    """A block's rows (best first), its rank stability and notes (e.g. repeated seeds)."""

    block: Block
    rows: list[GroupSummary]
    rank: RankStability
    alpha: float
    notes: list[str]


def _per_seed(group: Group, key: str) -> dict[int, float]:
    """``{seed: value}``; a seed's runs (its folds, any repeats) are averaged, runs without a seed skipped.

    A seed's value over the folds is their mean, as IGB ranks the models of one seed by their mean
    over its i.i.d. subgraphs."""
    by_seed: dict[int, list[float]] = {}
    for run in group.runs:
        if run.seed is not None:
            by_seed.setdefault(run.seed, []).append(run.value(key))
    return {seed: mean(values) for seed, values in by_seed.items()}


def summarize_block(block: Block, alpha: float = DEFAULT_ALPHA, reference_seed: int | None = None) -> BlockSummary:
    """Statistics of every group of ``block``; rows sorted best first (ties by label).

    ``reference_seed`` is the reference ranking of IGB's inversion number (default: the smallest
    seed every group has)."""
    test_key, val_key = block.test_key, block.val_key
    tests = [[run.value(test_key) for run in group.runs] for group in block.groups]
    means = [mean(values) for values in tests]
    sign = -1.0 if block.higher_is_better else 1.0
    order = sorted(range(len(block.groups)), key=lambda i: (sign * means[i], block.groups[i].label))
    best = order[0]
    p_values = [math.nan if i == best else welch_p_value(tests[best], tests[i]) for i in order]
    rows: list[GroupSummary] = []
    notes: list[str] = []
    for i, p_value, p_holm in zip(order, p_values, holm(p_values)):
        group = block.groups[i]
        params = [run.value("num_params") for run in group.runs]
        finite_params = {p for p in params if math.isfinite(p)}
        seeds = [run.seed for run in group.runs]
        folds = [run.fold for run in group.runs]
        replicates = list(zip(folds, seeds))
        repeated = sorted({s for f, s in replicates if s is not None and replicates.count((f, s)) > 1})
        paper = paper_value(group.runs[0].config, block.metric)
        test_std = sample_std(tests[i])
        limits = sorted({limit for run in group.runs for limit in run.evaluation_limits})
        if any(run.fast_dev_run for run in group.runs):
            notes.append(
                f"{group.label}: trainer.fast_dev_run runs (a smoke test: a batch per split, no real training); "
                "their numbers are not results"
            )
        elif limits:
            notes.append(
                f"{group.label}: runs with {', '.join(limits)} (validated or tested on part of the split); "
                "their numbers are not results"
            )
        if repeated:
            where = " of one fold" if any(folds) else ""
            notes.append(f"{group.label}: seeds {repeated}{where} occur more than once (averaged for rank stability)")
        rows.append(
            GroupSummary(
                label=group.label,
                n=len(group.runs),
                seeds=tuple(seeds),
                test_mean=means[i],
                test_std=test_std,
                val_mean=mean([run.value(val_key) for run in group.runs]) if val_key else math.nan,
                val_std=sample_std([run.value(val_key) for run in group.runs]) if val_key else math.nan,
                num_params=mean(params),
                num_params_equal=len(finite_params) <= 1,
                time_per_epoch_s=mean([run.value("time_per_epoch_s") for run in group.runs]),
                best_epoch=mean([run.value("best_epoch") for run in group.runs]),
                p_value=p_value,
                significant=math.isfinite(p_holm) and p_holm < alpha,
                is_best=i == best,
                paper=paper,
                paper_gap_std=gap_in_std(means[i], test_std, paper),
                folds=tuple(folds),
                p_holm=p_holm,
                recipe=recipe_card(group.runs[0].config),
            )
        )
    rank = rank_stability([_per_seed(group, test_key) for group in block.groups], reference_seed)
    return BlockSummary(block=block, rows=rows, rank=rank, alpha=alpha, notes=notes)
