r"""Comparing configurations over several datasets: average ranks, Friedman test, Nemenyi's critical difference.

When a report holds several blocks (datasets), each configuration (a group label, e.g.
``model=gcn``) present in every block is ranked within each block by its mean ``test/<metric>``
(rank 1 = best; tied means share the average of their ranks), following Demšar, "Statistical
Comparisons of Classifiers over Multiple Data Sets" (JMLR 7, 2006), Section 3.2.2:

* average rank :math:`R_j = \frac1N \sum_i r_i^j` over the :math:`N` blocks;
* Friedman test of "all configurations rank alike" (``scipy.stats.friedmanchisquare``, which
  corrects for ties): :math:`\chi^2_F = \frac{12N}{k(k+1)}\big(\sum_j R_j^2 - \frac{k(k+1)^2}{4}\big)`
  with :math:`k - 1` degrees of freedom; scipy needs :math:`k \ge 3` configurations;
* Nemenyi post-hoc test: two configurations differ significantly when their average ranks
  differ by more than the critical difference
  :math:`CD = q_\alpha \sqrt{k(k+1) / (6N)}`, where :math:`q_\alpha` is the studentized range
  quantile :math:`q_{1-\alpha}(k, \infty)` divided by :math:`\sqrt2` (Demšar's Table 5a:
  2.343 for :math:`k=3`, 2.569 for :math:`k=4` at :math:`\alpha = 0.05`), computed with
  ``scipy.stats.studentized_range`` instead of a table or a dependency (scikit-posthocs,
  autorank). As Demšar advises, the post-hoc answer is meaningful only when Friedman rejects.

:func:`cd_figure` draws Demšar's critical-difference diagram: the average ranks on an axis,
the CD as a bar, and a thick line joining configurations whose ranks differ by less than the CD.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib.figure import Figure
from scipy import stats as scipy_stats

from graphbench.report.stats import DEFAULT_ALPHA, BlockSummary


@dataclass(frozen=True)
class RankTable:
    """Ranks of the configurations shared by every block, their averages and the tests over them.

    ``configs`` are ordered by average rank (best first); ``ranks[j][i]`` is config ``j``'s rank
    in block ``tasks[i]``. ``left_out`` names configurations missing from some block. NaN
    statistics come with a ``reason``.
    """

    tasks: tuple[str, ...]
    configs: tuple[str, ...]
    ranks: tuple[tuple[float, ...], ...]
    left_out: tuple[str, ...]
    alpha: float
    friedman_statistic: float = math.nan
    friedman_p: float = math.nan
    critical_difference: float = math.nan
    reason: str | None = None

    @property
    def average_ranks(self) -> tuple[float, ...]:
        """:math:`R_j`, the mean rank of each configuration over the blocks."""
        return tuple(math.fsum(ranks) / len(ranks) for ranks in self.ranks)

    @property
    def friedman_rejects(self) -> bool:
        return math.isfinite(self.friedman_p) and self.friedman_p < self.alpha

    def different_pairs(self) -> list[tuple[str, str]]:
        """Pairs whose average ranks differ by more than the critical difference (better first)."""
        if not math.isfinite(self.critical_difference):
            return []
        average = self.average_ranks
        return [
            (self.configs[a], self.configs[b])
            for a in range(len(self.configs))
            for b in range(a + 1, len(self.configs))
            if average[b] - average[a] > self.critical_difference
        ]


def nemenyi_critical_difference(k: int, n: int, alpha: float = DEFAULT_ALPHA) -> float:
    r"""Nemenyi's :math:`CD = q_\alpha \sqrt{k(k+1)/(6N)}` for ``k`` configurations over ``n`` blocks."""
    if k < 2 or n < 1:
        raise ValueError(f"the critical difference needs k >= 2 configurations and n >= 1 blocks, got k={k}, n={n}")
    q_alpha = float(scipy_stats.studentized_range.ppf(1.0 - alpha, k, math.inf)) / math.sqrt(2.0)
    return q_alpha * math.sqrt(k * (k + 1) / (6.0 * n))


def task_names(summaries: Sequence[BlockSummary]) -> list[str]:
    """One name per block: the dataset, with the tabulated key when a dataset has several blocks."""
    datasets = [summary.block.dataset for summary in summaries]
    return [
        summary.block.dataset
        if datasets.count(summary.block.dataset) == 1
        else f"{summary.block.dataset} ({summary.block.test_key})"
        for summary in summaries
    ]


def rank_table(summaries: Sequence[BlockSummary], alpha: float = DEFAULT_ALPHA) -> RankTable | None:
    """The rank table of ``summaries`` (see module docstring); ``None`` for fewer than two blocks."""
    if len(summaries) < 2:
        return None
    tasks = tuple(task_names(summaries))
    per_block = [{row.label: row.test_mean for row in summary.rows} for summary in summaries]
    first_seen = list(dict.fromkeys(label for means in per_block for label in means))
    shared = [label for label in first_seen if all(label in means for means in per_block)]
    left_out = tuple(label for label in first_seen if label not in shared)
    columns: list[list[float]] = []
    for summary, means in zip(summaries, per_block):
        sign = -1.0 if summary.block.higher_is_better else 1.0
        columns.append([float(r) for r in scipy_stats.rankdata([sign * means[label] for label in shared])])
    ranks = [tuple(column[j] for column in columns) for j in range(len(shared))]
    order = sorted(range(len(shared)), key=lambda j: (math.fsum(ranks[j]), shared[j]))
    configs = tuple(shared[j] for j in order)
    ordered = tuple(ranks[j] for j in order)
    k, n = len(shared), len(summaries)
    if k < 2:
        reason = f"needs >= 2 configurations present in every block; shared: {list(shared)}"
        return RankTable(tasks, configs, ordered, left_out, alpha, reason=reason)
    cd = nemenyi_critical_difference(k, n, alpha)
    if k < 3:
        reason = f"the Friedman test needs >= 3 configurations, got {k}"
        return RankTable(tasks, configs, ordered, left_out, alpha, critical_difference=cd, reason=reason)
    if all(len(set(column)) == 1 for column in columns):
        reason = "every configuration ties in every block"
        return RankTable(tasks, configs, ordered, left_out, alpha, critical_difference=cd, reason=reason)
    result = scipy_stats.friedmanchisquare(*[list(r) for r in ordered])
    return RankTable(tasks, configs, ordered, left_out, alpha, float(result.statistic), float(result.pvalue), cd)


def cliques(average: Sequence[float], cd: float) -> list[tuple[int, int]]:
    """Maximal runs ``(first, last)`` of rank-sorted configurations spanning less than ``cd``."""
    spans = []
    for first in range(len(average)):
        last = max(j for j in range(first, len(average)) if average[j] - average[first] < cd)
        if last > first and not any(a <= first and last <= b for a, b in spans):
            spans.append((first, last))
    return spans


def cd_figure(table: RankTable) -> Figure:
    """Demšar's critical-difference diagram of ``table`` (rank 1, the best, on the left)."""
    average = table.average_ranks
    k = len(table.configs)
    figure = Figure(figsize=(8, 1.8 + 0.3 * k), layout="constrained")
    axes = figure.subplots()
    axes.set_xlim(0.5, k + 0.5)
    axes.set_ylim(-(k + 2.0), 2.5)
    axes.axhline(0, color="black", linewidth=1)
    for tick in range(1, k + 1):
        axes.plot([tick, tick], [0, 0.2], color="black", linewidth=1)
        axes.text(tick, 0.35, str(tick), ha="center", va="bottom", fontsize="small")
    cd = table.critical_difference
    if math.isfinite(cd):
        axes.plot([1, 1 + cd], [1.6, 1.6], color="black", linewidth=2)
        axes.text(1 + cd / 2, 1.8, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize="small")
    for j, (label, rank) in enumerate(zip(table.configs, average)):
        y = -(j + 1.0)
        left = j < (k + 1) // 2
        x_text = 0.55 if left else k + 0.45
        axes.plot([rank, rank, x_text], [0, y, y], color=f"C{j % 10}", linewidth=1)
        axes.text(x_text, y, f"{label} ({rank:.2f})", ha="left" if left else "right", va="bottom", fontsize="small")
    if math.isfinite(cd):
        for level, (first, last) in enumerate(cliques(average, cd)):
            y = -0.3 - 0.25 * level
            axes.plot([average[first] - 0.05, average[last] + 0.05], [y, y], color="black", linewidth=3)
    axes.set_axis_off()
    friedman = f"Friedman p = {table.friedman_p:.3g}" if math.isfinite(table.friedman_p) else f"Friedman: {table.reason}"
    figure.suptitle(
        f"average rank over {len(table.tasks)} datasets ({', '.join(table.tasks)}); {friedman}; Nemenyi α = {table.alpha:g}",
        fontsize="small",
    )
    return figure
