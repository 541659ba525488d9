r"""A reproduced table: per cell ours beside the paper's, the difference in the paper's std, a verdict.

For a cell with our values :math:`x_1..x_n` (``metric.scale`` times each completed run's metric),
mean :math:`\bar x` and sample std :math:`s` (ddof=1; :func:`graphbench.report.stats.sample_std`), and
the paper's :math:`\mu \pm \sigma`:

* the difference in the paper's std is :math:`d = (\bar x - \mu) / \sigma`; the verdict reads
  :math:`|d|`: ``within 1 std`` (:math:`|d| \le 1`), ``within 2 std`` (:math:`|d| \le 2`), else ``differs``;
* when the paper gives no std (or 0), the yardstick is ours: :math:`d = (\bar x - \mu) / s` and the verdict
  says so (``within 1 std (ours; paper gives none)``); with :math:`n < 2` or :math:`s = 0` there is no
  yardstick and the verdict is ``no std to compare``;
* ours equal to the paper's value (e.g. a rate of 0.00 against 0.00 ± 0.00): ``equal``, :math:`d = 0`, whatever the stds;
  equal to float32 precision (relative :data:`EQUAL_REL_TOL`), the precision the runs record their metrics at
  (CSL's chance accuracy 0.1 is recorded as 0.10000000149);
* no paper value: ``no paper value``; no completed run: ``not run`` (``missing data`` when the cell's
  raw files are absent).

Deviations are the runs' ``recipe_card.deviations`` (their resolved config in ``results.json``), one
entry per key; nothing is shown for runs without a recipe card.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from graphbench.report.collect import Block, Group, Run, load_run
from graphbench.report.literature import Deviation, PaperValue, recipe_card
from graphbench.report.provenance import provenance_line
from graphbench.report.stats import mean, rank_stability, sample_std
from graphbench.report.table import format_rank_stability
from graphbench.reproduce.plan import CellPlan, TablePlan
from graphbench.run.record import RESULTS_FILENAME

NOT_AVAILABLE: str = "n/a"
#: ours and the paper's value are ``equal`` within this relative difference: a few float32 roundings (eps 1.2e-7)
EQUAL_REL_TOL: float = 1e-6


def verdict(ours_mean: float, ours_std: float, n: int, paper: PaperValue | None) -> tuple[float, str]:
    """``(d, verdict)`` for a cell (see the module docstring); ``d`` is NaN where there is no yardstick."""
    if paper is None:
        return math.nan, "no paper value"
    if n == 0 or not math.isfinite(ours_mean):
        return math.nan, "not run"
    if math.isclose(ours_mean, paper.value, rel_tol=EQUAL_REL_TOL, abs_tol=1e-12):
        return 0.0, "equal"
    if paper.std is not None and paper.std > 0:
        d, suffix = (ours_mean - paper.value) / paper.std, ""
    elif n >= 2 and math.isfinite(ours_std) and ours_std > 0:
        d, suffix = (ours_mean - paper.value) / ours_std, " (ours; paper gives none)"
    else:
        return math.nan, "no std to compare"
    if abs(d) <= 1:
        return d, f"within 1 std{suffix}"
    if abs(d) <= 2:
        return d, f"within 2 std{suffix}"
    return d, f"differs{suffix}"


def deviations_of(runs: Sequence[Run]) -> list[Deviation]:
    """The distinct ``recipe_card.deviations`` over ``runs`` (:func:`graphbench.report.literature.recipe_card`),
    one per key, first seen first; empty when no run has a recipe card."""
    found: dict[str, Deviation] = {}
    for run in runs:
        card = recipe_card(run.config)
        for deviation in card.deviations if card is not None else ():
            found.setdefault(deviation.key, deviation)
    return list(found.values())


@dataclass(frozen=True)
class CellResult:
    """A cell's numbers: ours over its completed runs, the paper's, the difference and the verdict."""

    plan: CellPlan
    runs: tuple[Run, ...]
    values: tuple[float, ...]
    mean: float
    std: float
    d: float
    verdict: str
    deviations: tuple[Deviation, ...]

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def paper(self) -> PaperValue | None:
        return self.plan.cell.paper


def cell_result(plan: CellPlan) -> CellResult:
    """Read the cell's run directories (only those its plan names) and compare with the paper."""
    runs = tuple(load_run(slot.path / RESULTS_FILENAME) for slot in plan.runs if (slot.path / RESULTS_FILENAME).exists())
    metric = plan.cell.metric
    values = tuple(
        metric.scale * run.value(metric.key) for run in runs if run.status == "completed" and math.isfinite(run.value(metric.key))
    )
    ours_mean, ours_std = mean(values), sample_std(values)
    if plan.missing_data:
        d, text = math.nan, "missing data"
    else:
        d, text = verdict(ours_mean, ours_std, len(values), plan.cell.paper)
    completed = tuple(run for run in runs if run.status == "completed")
    return CellResult(plan, completed, values, ours_mean, ours_std, d, text, tuple(deviations_of(completed)))


def format_value(value: float, std: float | None, decimals: int = 2) -> str:
    """``81.50 ± 0.40``, ``81.50`` without a std, ``n/a`` for NaN."""
    if not math.isfinite(value):
        return NOT_AVAILABLE
    if std is None:
        return f"{value:.{decimals}f}"
    return f"{value:.{decimals}f} ± {std:.{decimals}f}" if math.isfinite(std) else f"{value:.{decimals}f} ± {NOT_AVAILABLE}"


def ours_text(result: CellResult) -> str:
    """``82.47 ± 0.45 (n=3)``; ``2 of 3`` when runs are missing; ``missing data: <paths>`` for a cell not run."""
    if result.plan.missing_data:
        return "missing data: " + ", ".join(result.plan.missing_data)
    expected = len(result.plan.runs)
    n = f"n={result.n}" if result.n == expected else f"n={result.n} of {expected}"
    return f"{format_value(result.mean, result.std)} ({n})" if result.n else f"not run ({n})"


def paper_text(result: CellResult) -> str:
    paper = result.paper
    return "null" if paper is None else format_value(paper.value, paper.std)


def provenance(results: Sequence[CellResult]) -> str:
    """:func:`graphbench.report.provenance.provenance_line` over every completed run of the table."""
    groups = [Group(key=r.plan.cell.slug, items={}, runs=list(r.runs), label=r.plan.cell.label) for r in results]
    if not any(group.runs for group in groups):
        return "Provenance: no completed runs."
    return provenance_line(Block(dataset="", metric="", higher_is_better=True, groups=groups))


def rank_lines(table: TablePlan, results: Sequence[CellResult]) -> list[str]:
    """For each column, IGB's and the all-pairs inversion number of its rows' per-seed rankings."""
    lines = []
    for column in table.spec.columns:
        per_seed: list[dict[int, float]] = []
        for result in results:
            if result.plan.cell.column == column and result.runs:
                by_seed: dict[int, list[float]] = {}
                for run in result.runs:
                    if run.seed is not None:
                        by_seed.setdefault(run.seed, []).append(run.value(result.plan.cell.metric.key))
                per_seed.append({seed: mean(values) for seed, values in by_seed.items()})
        lines.append(f"- {column}: {format_rank_stability(rank_stability(per_seed))}")
    return lines


def format_markdown(table: TablePlan, results: Sequence[CellResult]) -> str:
    """The table as Markdown: heading, the fast warning, one row per cell, deviations, notes, provenance, commands.

    The deviations column and list appear only when some run's recipe card names a deviation."""
    spec = table.spec
    any_deviations = any(result.deviations for result in results)
    lines = [f"## {spec.title}", "", f"Source: {spec.source}."]
    if table.options.fast:
        fast = " ".join(spec.fast) or "none"
        lines += ["", f"**Not a reproduction: a --fast smoke run** (one seed, first fold, `{fast}`)."]
    lines += [
        "",
        "Ours: mean ± sample std (ddof=1) over n runs (folds × seeds). d = (ours − paper) / paper's std; "
        "where the paper gives no std, ours is the yardstick. Verdict on |d|: ≤ 1 within 1 std, ≤ 2 within 2 std, else differs.",
        "",
        "| row | column | metric | ours (mean ± std, n) | paper (mean ± std) | d (std) | verdict |"
        + (" deviations |" if any_deviations else ""),
        "|---|---|---|---|---|---:|---|" + ("---|" if any_deviations else ""),
    ]
    for result in results:
        cell = result.plan.cell
        d = f"{result.d:+.2f}" if math.isfinite(result.d) else NOT_AVAILABLE
        cells = [cell.row, cell.column, cell.metric.label, ours_text(result), paper_text(result), d, result.verdict]
        cells += ["; ".join(d.key for d in result.deviations)] if any_deviations else []
        lines.append("| " + " | ".join(cells) + " |")
    sources = dict.fromkeys(r.paper.source for r in results if r.paper is not None)
    lines += ["", "Paper values: " + "; ".join(sources) + "." if sources else "Paper values: none recorded."]
    unrecorded: dict[str, list[str]] = {}
    for result in results:
        if result.paper is None:
            unrecorded.setdefault(result.plan.cell.paper_note, []).append(result.plan.cell.label)
    lines += [f"Paper value null for {', '.join(labels)}: {note}." for note, labels in unrecorded.items()]
    deviations = [(r.plan.cell.label, d) for r in results for d in r.deviations]
    if deviations:
        lines += ["", "Deviations from the papers' recipes (recipe_card):"]
        lines += [f"- {label}: {deviation.formatted()}" for label, deviation in deviations]
    if spec.rank_stability:
        lines += ["", "Rank stability of each column's rows across seeds:", *rank_lines(table, results)]
    lines += [f"Note: {note}" for note in spec.notes]
    lines += ["", provenance(results), "", "Commands:", "", "```bash"]
    lines += list(dict.fromkeys(result.plan.shown for result in results if result.plan.runnable))  # shared runs once
    lines += ["```"]
    return "\n".join(lines) + "\n"


CSV_COLUMNS: tuple[str, ...] = (
    "table",
    "row",
    "column",
    "metric",
    "n",
    "n_expected",
    "values",
    "ours_mean",
    "ours_std",
    "paper_value",
    "paper_std",
    "paper_source",
    "d",
    "verdict",
    "deviations",
    "fast",
    "command",
)


def _number(value: float | None) -> str:
    return repr(value) if value is not None and math.isfinite(value) else ""


def format_csv(table: TablePlan, results: Sequence[CellResult]) -> str:
    """One row per cell, numbers at full precision (see :data:`CSV_COLUMNS`)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for result in results:
        cell, paper = result.plan.cell, result.paper
        row: dict[str, Any] = {
            "table": table.spec.name,
            "row": cell.row,
            "column": cell.column,
            "metric": cell.metric.key,
            "n": result.n,
            "n_expected": len(result.plan.runs),
            "values": " ".join(repr(v) for v in result.values),
            "ours_mean": _number(result.mean),
            "ours_std": _number(result.std),
            "paper_value": _number(paper.value) if paper else "",
            "paper_std": _number(paper.std) if paper else "",
            "paper_source": paper.source if paper else cell.paper_note,
            "d": _number(result.d),
            "verdict": result.verdict,
            "deviations": " ".join(d.formatted() for d in result.deviations),
            "fast": table.options.fast,
            "command": result.plan.shown if result.plan.runnable else "",
        }
        writer.writerow(row)
    return buffer.getvalue()
