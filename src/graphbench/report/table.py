"""Render block summaries as a markdown report or as CSV.

Markdown: for each block a heading, a table (one row per group, best first), then the
failed runs (path + status, never dropped), then one rank-stability line per block.
CSV: one row per group (``kind=group``) and one per failed run (``kind=failed``), numbers
at full precision, with each block's rank stability repeated on its group rows.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence

from graphbench.report.collect import FailedRun
from graphbench.report.stats import BlockSummary, GroupSummary, RankStability

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
    """The parameter count if equal over seeds, else ``<mean> (mean)``."""
    if not math.isfinite(row.num_params):
        return NOT_AVAILABLE
    return f"{row.num_params:.0f}" if row.num_params_equal else f"{row.num_params:.1f} (mean)"


def significance_marker(row: GroupSummary) -> str:
    """``best``; ``*`` if p < alpha; ``ns`` if not; ``n/a`` if the test is undefined."""
    if row.is_best:
        return "best"
    if not math.isfinite(row.p_value):
        return NOT_AVAILABLE
    return "*" if row.significant else "ns"


def block_title(summary: BlockSummary) -> str:
    """``dataset=peptides-func, test/ap (higher is better)``."""
    block = summary.block
    direction = "higher" if block.higher_is_better else "lower"
    return f"dataset={block.dataset}, test/{block.metric} ({direction} is better)"


def format_rank_stability(rank: RankStability) -> str:
    """One line: mean and max inversion number over seed pairs (or why it is missing)."""
    if rank.reason is not None:
        return f"Rank stability (IGB inversion number; {IGB_CITATION}): not computed ({rank.reason})."
    seeds = ", ".join(str(seed) for seed in rank.seeds)
    return (
        f"Rank stability (IGB inversion number; {IGB_CITATION}): "
        f"mean {rank.mean_inversions:.2f}, max {rank.max_inversions} discordant group pairs "
        f"over {rank.n_seed_pairs} seed pairs (seeds {seeds}; {rank.n_groups} groups; "
        f"at most {rank.max_possible} per seed pair)."
    )


def format_markdown_table(summary: BlockSummary) -> str:
    """The markdown table of one block, preceded by its heading and the legend."""
    metric = summary.block.metric
    lines = [f"## {block_title(summary)}", ""]
    if summary.block.fixed:
        lines += [f"Fixed: {summary.block.fixed}", ""]
    with_paper = any(row.paper is not None for row in summary.rows)
    legend = (
        f"Values: mean ± sample std (ddof=1) over seeds. p: two-sided Welch's t-test (unequal variances) "
        f"on test/{metric} vs the best group; * = p < {summary.alpha:g}, ns = not significant."
    )
    if with_paper:
        legend += " paper: the published value named by the config's `literature`; Δ = (mean − paper) / std over seeds."
    lines += [
        legend,
        "",
        f"| config | test/{metric} (mean ± std) | val/{metric} (mean ± std) | n seeds | params "
        "| time/epoch (s) | best epoch | p vs best | sig. |" + (" paper | Δ vs paper (std) |" if with_paper else ""),
        "|---|---|---|---|---|---|---|---|---|" + ("---|---|" if with_paper else ""),
    ]
    for row in summary.rows:
        cells = [
            row.label,
            format_mean_std(row.test_mean, row.test_std),
            format_mean_std(row.val_mean, row.val_std),
            str(row.n),
            format_params(row),
            format_number(row.time_per_epoch_s, 2),
            format_number(row.best_epoch, 1),
            "—" if row.is_best else format_p_value(row.p_value),
            significance_marker(row),
        ]
        if with_paper:
            cells += [row.paper.formatted() if row.paper else NOT_AVAILABLE, format_number(row.paper_gap_std, 2)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [f"Note: {note}" for note in summary.notes]
    return "\n".join(lines)


def format_failed(failed: Sequence[FailedRun]) -> str:
    """``Failed runs (k):`` then one ``- path: status [config]`` line each."""
    if not failed:
        return "Failed runs: none."
    lines = [f"Failed runs ({len(failed)}):"]
    for run in failed:
        suffix = f" [{run.label}]" if run.label else ""
        lines.append(f"- {run.path}: {run.status}{suffix}")
    return "\n".join(lines)


def format_markdown(summaries: Sequence[BlockSummary], failed: Sequence[FailedRun]) -> str:
    """The full report: tables, failed runs, rank-stability lines."""
    parts = [format_markdown_table(summary) for summary in summaries]
    if not summaries:
        parts.append("No completed runs.")
    parts.append(format_failed(failed))
    ranks = [
        format_rank_stability(summary.rank)
        if len(summaries) == 1
        else f"[{block_title(summary)}] {format_rank_stability(summary.rank)}"
        for summary in summaries
    ]
    if ranks:
        parts.append("\n".join(ranks))
    return "\n\n".join(parts) + "\n"


CSV_COLUMNS: tuple[str, ...] = (
    "kind",
    "dataset",
    "metric",
    "higher_is_better",
    "config",
    "n_seeds",
    "seeds",
    "test_mean",
    "test_std_ddof1",
    "val_mean",
    "val_std_ddof1",
    "num_params",
    "time_per_epoch_s",
    "best_epoch",
    "p_value_vs_best",
    "significant",
    "is_best",
    "alpha",
    "rank_inversions_mean",
    "rank_inversions_max",
    "rank_seed_pairs",
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


def format_csv(summaries: Sequence[BlockSummary], failed: Sequence[FailedRun]) -> str:
    """Group rows and failed-run rows in one CSV (see :data:`CSV_COLUMNS`)."""
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
                    "n_seeds": row.n,
                    "seeds": " ".join("?" if s is None else str(s) for s in row.seeds),
                    "test_mean": _csv_number(row.test_mean),
                    "test_std_ddof1": _csv_number(row.test_std),
                    "val_mean": _csv_number(row.val_mean),
                    "val_std_ddof1": _csv_number(row.val_std),
                    "num_params": _csv_number(row.num_params),
                    "time_per_epoch_s": _csv_number(row.time_per_epoch_s),
                    "best_epoch": _csv_number(row.best_epoch),
                    "p_value_vs_best": _csv_number(row.p_value),
                    "significant": row.significant,
                    "is_best": row.is_best,
                    "alpha": summary.alpha,
                    "rank_inversions_mean": _csv_number(rank.mean_inversions),
                    "rank_inversions_max": "" if rank.reason else rank.max_inversions,
                    "rank_seed_pairs": rank.n_seed_pairs,
                    "path": "",
                    "status": "completed",
                    "paper_value": _csv_number(row.paper.value) if row.paper else "",
                    "paper_std": _csv_number(row.paper.std) if row.paper and row.paper.std is not None else "",
                    "paper_source": row.paper.source if row.paper else "",
                    "paper_gap_std": _csv_number(row.paper_gap_std),
                }
            )
    for run in failed:
        writer.writerow({"kind": "failed", "config": run.label or "", "path": str(run.path), "status": run.status})
    return buffer.getvalue()
