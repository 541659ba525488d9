"""Render block summaries as a markdown report or as CSV.

Markdown: for each block a heading, its provenance line (code, packages, machines of its runs), a
table (one row per group, best first), the recipe card of each row that has one (its source and
deviations), and a warning for each row whose runs mix commits or package
versions (:mod:`~graphbench.report.provenance`), then, when there are several blocks, the rank
table over them (:mod:`~graphbench.report.ranks`), then the failed runs (path + status, never
dropped) and the pruned trials of an Optuna search apart, then one rank-stability line per block.
CSV: one row per group (``kind=group``), one per configuration of the rank table
(``kind=rank``), one per failed run (``kind=failed``) and per pruned trial (``kind=pruned``), numbers at full precision, with
each block's rank stability repeated on its group rows.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence

from graphbench.report.collect import FailedRun
from graphbench.report.provenance import mixed_warnings, provenance_line
from graphbench.report.ranks import RankTable
from graphbench.report.stats import BlockSummary, GroupSummary, RankStability
from graphbench.run.record import is_pruned

NOT_AVAILABLE: str = "n/a"
IGB_CITATION: str = "Li et al., IJCAI 2022, arXiv:2205.14403"


def format_number(value: float, decimals: int) -> str:
    """``value`` with ``decimals`` decimals, or ``n/a`` when it is NaN."""
    return f"{value:.{decimals}f}" if math.isfinite(value) else NOT_AVAILABLE


def format_mean_std(mean: float, std: float) -> str:
    """``0.6200 ± 0.0200`` (4 decimals; ``n/a`` for an undefined std)."""
    return f"{format_number(mean, 4)} ± {format_number(std, 4)}"


def format_p_value(p_value: float) -> str:
    """4 decimals, or scientific notation below 0.001; ``n/a`` when undefined."""
    if not math.isfinite(p_value):
        return NOT_AVAILABLE
    return f"{p_value:.4f}" if p_value >= 1e-3 else f"{p_value:.2e}"


def format_params(row: GroupSummary) -> str:
    """The parameter count (``99,804``) if equal over seeds, else ``<mean> (mean)``."""
    if not math.isfinite(row.num_params):
        return NOT_AVAILABLE
    return f"{row.num_params:,.0f}" if row.num_params_equal else f"{row.num_params:,.1f} (mean)"


def format_epoch(value: float) -> str:
    """A mean best epoch: ``15`` when whole (one run, or runs that agree), else ``15.5``; ``n/a`` when NaN."""
    if not math.isfinite(value):
        return NOT_AVAILABLE
    return f"{value:.0f}" if value.is_integer() else f"{value:.1f}"


def format_replicates(row: GroupSummary) -> str:
    """``6 (3 × 2)``: runs (folds × seeds); ``5 of 3 × 2`` when some fold lacks a seed."""
    grid = row.n_folds * row.n_seeds
    return f"{row.n} ({row.n_folds} × {row.n_seeds})" if row.n == grid else f"{row.n} of {row.n_folds} × {row.n_seeds}"


def significance_marker(row: GroupSummary) -> str:
    """``best``; ``*`` if the Holm-adjusted p < alpha; ``ns`` if not; ``n/a`` if the test is undefined."""
    if row.is_best:
        return "best"
    if not math.isfinite(row.p_holm):
        return NOT_AVAILABLE
    return "*" if row.significant else "ns"


def block_title(summary: BlockSummary) -> str:
    """``dataset=peptides-func, test/ap (higher is better)``."""
    block = summary.block
    direction = "higher" if block.higher_is_better else "lower"
    return f"dataset={block.dataset}, {block.test_key} ({direction} is better)"


def format_rank_stability(rank: RankStability) -> str:
    """One line: IGB's inversion number and the all-pairs inversion number (or why they are missing)."""
    head = f"Rank stability across seeds ({IGB_CITATION}):"
    if rank.reason is not None:
        return f"{head} not computed ({rank.reason})."
    seeds = ", ".join(str(seed) for seed in rank.seeds)
    others = len(rank.seeds) - 1
    return (
        f"{head} IGB's inversion number {rank.igb_inversions} (inversions against seed {rank.reference_seed}'s "
        f"ranking, summed over the {others} other seed{'s' if others != 1 else ''}; at most {rank.igb_max_possible}); "
        f"all-pairs inversion number mean {rank.mean_inversions:.2f}, max {rank.max_inversions} discordant group pairs "
        f"over {rank.n_seed_pairs} seed pair{'s' if rank.n_seed_pairs != 1 else ''} (at most {rank.max_possible} per seed pair); "
        f"seeds {seeds}; {rank.n_groups} groups."
    )


def format_markdown_table(summary: BlockSummary) -> str:
    """The markdown table of one block, preceded by its heading and the legend."""
    test_key, val_key = summary.block.test_key, summary.block.val_key or "val"
    lines = [f"## {block_title(summary)}", ""]
    if summary.block.fixed:
        lines += [f"Fixed: {summary.block.fixed}", ""]
    lines += [provenance_line(summary.block), ""]
    with_paper = any(row.paper is not None for row in summary.rows)
    tests = sum(1 for row in summary.rows if math.isfinite(row.p_value))
    legend = "Values: mean ± sample std (ddof=1) over runs (folds × seeds). "
    if tests:
        legend += (
            f"p: two-sided Welch's t-test (unequal variances) on {test_key} vs the best group, Holm-corrected over "
            f"the {tests} test{'s' if tests != 1 else ''} of this table; * = Holm p < {summary.alpha:g}, ns = not significant."
        )
    else:
        legend += "p: no test in this table (Welch's t-test needs a second group and two runs in each)."
    if with_paper:
        legend += " paper: the published value named by the config's `literature`; Δ = (mean − paper) / std over runs."
    lines += [
        legend,
        "",
        f"| config | {test_key} (mean ± std) | {val_key} (mean ± std) | n (folds × seeds) | params "
        "| time/epoch (s) | best epoch | p vs best (Holm) | sig. |" + (" paper | Δ vs paper (std) |" if with_paper else ""),
        "|---|---|---|---|---|---|---|---|---|" + ("---|---|" if with_paper else ""),
    ]
    for row in summary.rows:
        cells = [
            row.label,
            format_mean_std(row.test_mean, row.test_std),
            format_mean_std(row.val_mean, row.val_std),
            format_replicates(row),
            format_params(row),
            format_number(row.time_per_epoch_s, 2),
            format_epoch(row.best_epoch),
            "—" if row.is_best else format_p_value(row.p_holm),
            significance_marker(row),
        ]
        if with_paper:
            cells += [row.paper.formatted() if row.paper else NOT_AVAILABLE, format_number(row.paper_gap_std, 2)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += recipe_lines(summary)
    lines += [f"Note: {note}" for note in summary.notes]
    lines += mixed_warnings(summary.block)
    return "\n".join(lines)


def recipe_lines(summary: BlockSummary) -> list[str]:
    """Under a table, for each row whose config carries a recipe card: ``Recipe card of <label>: <source>``,
    then one ``- <deviation>`` line each (:meth:`~graphbench.report.literature.Deviation.formatted`), or
    ``- no deviations``."""
    lines: list[str] = []
    for row in summary.rows:
        if row.recipe is None:
            continue
        lines += ["", f"Recipe card of {row.label}: {row.recipe.source}"]
        lines += [f"- deviation {d.formatted()}" for d in row.recipe.deviations] or ["- no deviations"]
    return lines


def format_failed(failed: Sequence[FailedRun]) -> str:
    """``Failed runs (k):`` then one ``- path: status [config]`` line each; the trials an Optuna search
    pruned (``pruned at epoch N``) are no failures: listed apart, under ``Pruned trials (k)``, after them."""
    pruned = [run for run in failed if is_pruned(run.status)]
    others = [run for run in failed if not is_pruned(run.status)]
    lines = [f"Failed runs ({len(others)}):"] if others else ["Failed runs: none."]
    lines += [_run_line(run) for run in others]
    if pruned:
        lines += ["", f"Pruned trials ({len(pruned)}), stopped early by the Optuna search's pruner, not in the tables:"]
        lines += [_run_line(run) for run in pruned]
    return "\n".join(lines)


def _run_line(run: FailedRun) -> str:
    suffix = f" [{run.label}]" if run.label else ""
    return f"- {run.path}: {run.status}{suffix}"


def format_rank_table(table: RankTable) -> str:
    """The ranks of the configurations over the blocks, their averages, Friedman's test and Nemenyi's CD."""
    lines = [
        "## Ranks over datasets",
        "",
        "Rank of each configuration's mean test metric within each dataset (1 = best, ties share the average rank); "
        "Friedman test and Nemenyi post-hoc over the average ranks (Demšar, JMLR 2006).",
        "",
        "| config | " + " | ".join(table.tasks) + " | average rank |",
        "|---|" + "---|" * (len(table.tasks) + 1),
    ]
    for label, ranks, average in zip(table.configs, table.ranks, table.average_ranks):
        lines.append(f"| {label} | " + " | ".join(f"{rank:g}" for rank in ranks) + f" | {average:.2f} |")
    k, n = len(table.configs), len(table.tasks)
    if math.isfinite(table.friedman_p):
        verdict = "rejects" if table.friedman_rejects else "does not reject"
        friedman = (
            f"Friedman test (k = {k} configurations, N = {n} datasets): chi² = {table.friedman_statistic:.4f}, "
            f"p = {format_p_value(table.friedman_p)}; it {verdict} equal ranks at α = {table.alpha:g}."
        )
    else:
        friedman = f"Friedman test: not computed ({table.reason})."
    lines += ["", friedman]
    if math.isfinite(table.critical_difference):
        pairs = ", ".join(f"{better} > {worse}" for better, worse in table.different_pairs()) or "none"
        caveat = "" if table.friedman_rejects else " (a post-hoc answer only counts when Friedman rejects)"
        lines.append(
            f"Nemenyi critical difference (α = {table.alpha:g}): CD = {table.critical_difference:.4f}; "
            f"pairs whose average ranks differ by more: {pairs}{caveat}."
        )
    if table.left_out:
        lines.append(f"Left out (not run on every dataset): {', '.join(table.left_out)}.")
    return "\n".join(lines)


def format_markdown(summaries: Sequence[BlockSummary], failed: Sequence[FailedRun], ranks: RankTable | None = None) -> str:
    """The full report: tables, the rank table over blocks (when given), failed runs, rank-stability lines."""
    parts = [format_markdown_table(summary) for summary in summaries]
    if not summaries:
        parts.append("No completed runs.")
    if ranks is not None:
        parts.append(format_rank_table(ranks))
    parts.append(format_failed(failed))
    stability = [
        format_rank_stability(summary.rank)
        if len(summaries) == 1
        else f"[{block_title(summary)}] {format_rank_stability(summary.rank)}"
        for summary in summaries
    ]
    if stability:
        parts.append("\n".join(stability))
    return "\n\n".join(parts) + "\n"


CSV_COLUMNS: tuple[str, ...] = (
    "kind",
    "dataset",
    "metric",
    "higher_is_better",
    "config",
    "n_runs",
    "n_folds",
    "n_seeds",
    "folds",
    "seeds",
    "test_mean",
    "test_std_ddof1",
    "val_mean",
    "val_std_ddof1",
    "num_params",
    "time_per_epoch_s",
    "best_epoch",
    "p_value_vs_best",
    "p_value_vs_best_holm",
    "significant",
    "is_best",
    "alpha",
    "rank_inversions_mean",
    "rank_inversions_max",
    "rank_seed_pairs",
    "rank_inversions_igb",
    "rank_reference_seed",
    "average_rank",
    "friedman_p",
    "critical_difference",
    "path",
    "status",
    "paper_value",
    "paper_std",
    "paper_source",
    "paper_gap_std",
)


def _csv_number(value: float) -> str:
    """Full-precision ``repr`` of a float, or empty for NaN."""
    return repr(value) if math.isfinite(value) else ""


def format_csv(summaries: Sequence[BlockSummary], failed: Sequence[FailedRun], ranks: RankTable | None = None) -> str:
    """Group rows, rank-table rows and failed-run rows in one CSV (see :data:`CSV_COLUMNS`)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for summary in summaries:
        block, rank = summary.block, summary.rank
        for row in summary.rows:
            writer.writerow(
                {
                    "kind": "group",
                    "dataset": block.dataset,
                    "metric": block.metric,
                    "higher_is_better": block.higher_is_better,
                    "config": row.label,
                    "n_runs": row.n,
                    "n_folds": row.n_folds,
                    "n_seeds": row.n_seeds,
                    "folds": " ".join(fold.replace(" ", ",") or "-" for fold in row.folds),
                    "seeds": " ".join("?" if s is None else str(s) for s in row.seeds),
                    "test_mean": _csv_number(row.test_mean),
                    "test_std_ddof1": _csv_number(row.test_std),
                    "val_mean": _csv_number(row.val_mean),
                    "val_std_ddof1": _csv_number(row.val_std),
                    "num_params": _csv_number(row.num_params),
                    "time_per_epoch_s": _csv_number(row.time_per_epoch_s),
                    "best_epoch": _csv_number(row.best_epoch),
                    "p_value_vs_best": _csv_number(row.p_value),
                    "p_value_vs_best_holm": _csv_number(row.p_holm),
                    "significant": row.significant,
                    "is_best": row.is_best,
                    "alpha": summary.alpha,
                    "rank_inversions_mean": _csv_number(rank.mean_inversions),
                    "rank_inversions_max": "" if rank.reason else rank.max_inversions,
                    "rank_seed_pairs": rank.n_seed_pairs,
                    "rank_inversions_igb": "" if rank.reason else rank.igb_inversions,
                    "rank_reference_seed": "" if rank.reference_seed is None else rank.reference_seed,
                    "path": "",
                    "status": "completed",
                    "paper_value": _csv_number(row.paper.value) if row.paper else "",
                    "paper_std": _csv_number(row.paper.std) if row.paper and row.paper.std is not None else "",
                    "paper_source": row.paper.source if row.paper else "",
                    "paper_gap_std": _csv_number(row.paper_gap_std),
                }
            )
    if ranks is not None:
        for label, average in zip(ranks.configs, ranks.average_ranks):
            writer.writerow(
                {
                    "kind": "rank",
                    "dataset": " ".join(ranks.tasks),
                    "config": label,
                    "alpha": ranks.alpha,
                    "average_rank": _csv_number(average),
                    "friedman_p": _csv_number(ranks.friedman_p),
                    "critical_difference": _csv_number(ranks.critical_difference),
                }
            )
    for run in failed:
        kind = "pruned" if is_pruned(run.status) else "failed"
        writer.writerow({"kind": kind, "config": run.label or "", "path": str(run.path), "status": run.status})
    return buffer.getvalue()
