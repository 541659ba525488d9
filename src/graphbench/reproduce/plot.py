"""The table as a figure: per cell our runs, our mean ± std and the paper's mean ± std, one panel per metric.

Drawn on :class:`matplotlib.figure.Figure` directly (the Agg canvas, no pyplot state), as
:mod:`graphbench.report.plots` does.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path

from matplotlib.figure import Figure

from graphbench.reproduce.table import CellResult


def write_plot(title: str, results: Sequence[CellResult], path: Path, fast: bool) -> Path:
    """Write the PNG to ``path``: for each metric a panel with one x position per cell."""
    metrics = list(dict.fromkeys(result.plan.cell.metric.label for result in results))
    width = max(6.0, 1.1 * len(results) + 2)
    figure = Figure(figsize=(width, 3.2 * len(metrics) + 0.6), layout="constrained")
    axes = figure.subplots(len(metrics), 1, squeeze=False)[:, 0]
    for axis, metric in zip(axes, metrics):
        cells = [result for result in results if result.plan.cell.metric.label == metric]
        for x, result in enumerate(cells):
            axis.scatter([x - 0.12] * result.n, result.values, s=10, color="tab:blue", alpha=0.5)
            if result.n:
                std = result.std if math.isfinite(result.std) else 0.0
                axis.errorbar(x - 0.12, result.mean, yerr=std, fmt="o", color="tab:blue", capsize=3)
            paper = result.paper
            if paper is not None:
                axis.errorbar(x + 0.12, paper.value, yerr=paper.std or 0.0, fmt="x", color="tab:red", capsize=3, markersize=8)
        axis.set_xticks(range(len(cells)), [result.plan.cell.label for result in cells], rotation=30, ha="right")
        axis.set_ylabel(metric)
        axis.grid(axis="y", alpha=0.3)
    heading = ("[--fast, not a reproduction] " if fast else "") + title
    lines = [*textwrap.wrap(heading, width=int(11 * width)), "ours (blue: runs, mean ± std), paper (red ×: mean ± std)"]
    axes[0].set_title("\n".join(lines), fontsize=10)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    return path
