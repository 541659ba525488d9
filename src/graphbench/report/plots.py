r"""Plots of a report: learning curves per group and a strip plot of the test metric per block.

``python -m graphbench.report <dirs> --plots <out>`` writes, for every block (one dataset and
metric, see :mod:`~graphbench.report.collect`), two PNGs into ``<out>``:

* ``<slug>-curves.png`` — the learning curves of every group, read from each run's Lightning CSV
  log ``<run dir>/csv/metrics.csv`` (:data:`METRICS_CSV`): left ``val/<metric>``, right
  ``train/loss``; each line is the mean over the group's runs (one per seed) at each epoch,
  with a ± sample std (ddof=1) band where at least two runs logged the epoch;
* ``<slug>-test.png`` — a strip plot of ``test/<metric>`` (from ``results.json``) of every run
  per group, jittered deterministically (:func:`jitter_offsets`), the group mean marked by a
  bar and the paper value (:mod:`~graphbench.report.literature`), when known, by a cross.
  Groups are in table order, best first.

With several blocks, ``critical-difference.png`` also draws the average ranks of the
configurations over the blocks and Nemenyi's critical difference (:func:`~graphbench.report.ranks.cd_figure`).

``<slug>`` is the block title (``dataset=zinc, test/mae (lower is better)``) slugified:
``dataset-zinc-test-mae-lower-is-better`` (:func:`slugify`).

Runs of different lengths (early stopping, a killed run): the statistics at epoch :math:`e`
are over the runs that logged epoch :math:`e`, and every :class:`Curve` keeps that count
``n`` per epoch. Truncating to the shortest run would hide most of training whenever one seed
stops early; instead the plot draws a dotted vertical line at the last epoch logged by every
run (:attr:`Curve.full_until`) when some runs go on past it, so the reader sees where the mean
stops being over all seeds. A run without a readable log is listed in :attr:`CurveStats.missing`
and counted in the legend, never dropped silently.

Figures are drawn on :class:`matplotlib.figure.Figure` directly, which renders PNGs with the
Agg canvas and never touches pyplot's global state or backend, so there is nothing to close
and an interactive session's backend is left alone.
"""

from __future__ import annotations

import csv
import logging
import math
import os
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from graphbench.report.collect import Block
from graphbench.report.ranks import RankTable, cd_figure
from graphbench.report.stats import BlockSummary, mean, sample_std
from graphbench.report.table import block_title

log = logging.getLogger(__name__)

#: Where a run's Lightning CSV log lies, relative to its run directory (``conf/logger/csv.yaml``).
METRICS_CSV: Path = Path("csv") / "metrics.csv"
#: The training-loss column of the CSV log.
TRAIN_LOSS: str = "train/loss"
#: The file name of the critical-difference diagram over several blocks.
CD_PLOT: str = "critical-difference.png"


@dataclass(frozen=True)
class Curve:
    """One metric over epochs, aggregated over runs: mean, sample std (ddof=1; NaN for ``n < 2``), runs ``n``."""

    epochs: tuple[int, ...]
    mean: tuple[float, ...]
    std: tuple[float, ...]
    n: tuple[int, ...]

    @property
    def full_until(self) -> int | None:
        """The last epoch logged by as many runs as the best-covered epoch (``None`` for an empty curve)."""
        if not self.epochs:
            return None
        most = max(self.n)
        return max(epoch for epoch, count in zip(self.epochs, self.n) if count == most)


@dataclass(frozen=True)
class CurveStats:
    """Learning curves of one group: ``val/<metric>`` and ``train/loss`` over its runs' CSV logs."""

    label: str
    metric: str
    n_runs: int
    val: Curve
    train_loss: Curve
    missing: tuple[Path, ...] = ()


def read_epoch_series(path: Path, columns: Sequence[str]) -> dict[str, dict[int, float]]:
    """``{column: {epoch: value}}`` from a Lightning ``metrics.csv``: the last finite value logged per epoch.

    Lightning writes the training-epoch row, the validation row and the test row as separate rows
    sharing ``epoch``; a column is empty in the rows that do not log it, so merging by epoch takes
    each column's non-empty value. A column absent from the file gives ``{}``.
    """
    series: dict[str, dict[int, float]] = {column: {} for column in columns}
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            raw_epoch = row.get("epoch") or ""
            if not raw_epoch:
                continue
            epoch = int(float(raw_epoch))
            for column in columns:
                raw = row.get(column) or ""
                value = float(raw) if raw else math.nan
                if math.isfinite(value):
                    series[column][epoch] = value
    return series


def aggregate(series: Sequence[Mapping[int, float]]) -> Curve:
    """Mean, sample std and count over the runs' ``{epoch: value}`` at every epoch any run logged."""
    epochs = sorted({epoch for values in series for epoch in values})
    per_epoch = [[values[epoch] for values in series if epoch in values] for epoch in epochs]
    return Curve(
        epochs=tuple(epochs),
        mean=tuple(mean(values) for values in per_epoch),
        std=tuple(sample_std(values) for values in per_epoch),
        n=tuple(len(values) for values in per_epoch),
    )


def learning_curves(block: Block) -> dict[str, CurveStats]:
    """``{group label: CurveStats}`` of every group of ``block``, from ``<run dir>/csv/metrics.csv``."""
    val_key = block.val_key or f"val/{block.metric}"
    curves: dict[str, CurveStats] = {}
    for group in block.groups:
        logs: list[dict[str, dict[int, float]]] = []
        missing: list[Path] = []
        for run in group.runs:
            try:
                logs.append(read_epoch_series(run.path / METRICS_CSV, (val_key, TRAIN_LOSS)))
            except (OSError, csv.Error, ValueError):
                missing.append(run.path)
        curves[group.label] = CurveStats(
            label=group.label,
            metric=block.metric,
            n_runs=len(logs),
            val=aggregate([one[val_key] for one in logs]),
            train_loss=aggregate([one[TRAIN_LOSS] for one in logs]),
            missing=tuple(missing),
        )
    return curves


def jitter_offsets(n: int, width: float = 0.3) -> list[float]:
    """``n`` evenly spaced offsets across ``[-width/2, width/2]`` (``[0.0]`` for one point): deterministic jitter."""
    if n <= 1:
        return [0.0] * n
    return [-width / 2 + width * i / (n - 1) for i in range(n)]


def slugify(title: str) -> str:
    """Lower-case ASCII letters and digits joined by ``-`` (``"dataset=zinc, test/mae"`` -> ``"dataset-zinc-test-mae"``)."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "block"


def _legend_label(stats: CurveStats) -> str:
    text = f"{stats.label} (n={stats.n_runs}"
    return text + (f"; {len(stats.missing)} without log)" if stats.missing else ")")


def _draw_curve(axes: Axes, curve: Curve, color: str, label: str | None) -> bool:
    """Mean line, ± std band where defined, dotted line where the runs stop all being there (then ``True``)."""
    axes.plot(curve.epochs, curve.mean, color=color, label=label, marker="." if len(curve.epochs) < 30 else None)
    lower = [m - s if math.isfinite(s) else math.nan for m, s in zip(curve.mean, curve.std)]
    upper = [m + s if math.isfinite(s) else math.nan for m, s in zip(curve.mean, curve.std)]
    axes.fill_between(curve.epochs, lower, upper, color=color, alpha=0.2, linewidth=0)
    full_until = curve.full_until
    if full_until is None or full_until == curve.epochs[-1]:
        return False
    axes.axvline(full_until, color=color, linestyle=":", linewidth=1)
    return True


def _title(figure: Figure, summary: BlockSummary, width: int) -> None:
    """The block title, and below it the fixed config wrapped to ``width`` characters in a smaller font."""
    fixed = summary.block.fixed
    figure.suptitle(block_title(summary) + (f"\n{textwrap.fill(f'fixed: {fixed}', width)}" if fixed else ""), fontsize="medium")


def curves_figure(summary: BlockSummary, curves: Mapping[str, CurveStats]) -> Figure:
    """Two panels: ``val/<metric>`` and ``train/loss`` mean ± std over runs per group, in table order."""
    figure = Figure(figsize=(12, 4.8), layout="constrained")
    val_axes, loss_axes = figure.subplots(1, 2)
    uneven = {"val": False, "loss": False}
    for i, row in enumerate(summary.rows):
        stats = curves.get(row.label)
        if stats is None:
            continue
        color = f"C{i % 10}"
        uneven["val"] |= _draw_curve(val_axes, stats.val, color, _legend_label(stats))
        uneven["loss"] |= _draw_curve(loss_axes, stats.train_loss, color, None)
    metric = summary.block.metric
    note = "epoch (dotted: last epoch reached by all seeds)"
    val_axes.set(xlabel=note if uneven["val"] else "epoch", ylabel=f"val/{metric}", title=f"val/{metric} (mean ± std over runs)")
    loss_axes.set(xlabel=note if uneven["loss"] else "epoch", ylabel=TRAIN_LOSS, title=f"{TRAIN_LOSS} (mean ± std over runs)")
    epochs = [epoch for stats in curves.values() for curve in (stats.val, stats.train_loss) for epoch in curve.epochs]
    for axes in (val_axes, loss_axes):
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        if epochs and min(epochs) == max(epochs):  # one epoch: one tick, not a fractional axis around it
            axes.set_xlim(epochs[0] - 0.5, epochs[0] + 0.5)
            axes.set_xticks([epochs[0]])
        axes.grid(alpha=0.3)
    val_axes.legend(fontsize="small")
    _title(figure, summary, width=130)
    return figure


def strip_figure(summary: BlockSummary) -> Figure:
    """``test/<metric>`` of every run per group (rows best first, top down), mean as a bar, paper value as a cross."""
    block = summary.block
    runs_of = {group.label: group.runs for group in block.groups}
    key = block.test_key
    figure = Figure(figsize=(8, 1.6 + 0.5 * len(summary.rows)), layout="constrained")
    axes = figure.subplots()
    positions = list(range(len(summary.rows)))[::-1]
    for y, (i, row) in zip(positions, enumerate(summary.rows)):
        values = [run.value(key) for run in runs_of.get(row.label, [])]
        offsets = jitter_offsets(len(values))
        color = f"C{i % 10}"
        axes.plot([row.test_mean, row.test_mean], [y - 0.3, y + 0.3], color="black", linewidth=2, zorder=3)
        axes.scatter(values, [y + offset for offset in offsets], color=color, s=24, zorder=4)
        if row.paper is not None:
            axes.scatter([row.paper.value], [y], marker="x", color="red", s=48, zorder=5)
    axes.set_yticks(positions, [row.label for row in summary.rows])
    axes.set_ylim(-0.6, len(summary.rows) - 0.4)
    direction = "higher" if block.higher_is_better else "lower"
    paper = "; x: paper value" if any(row.paper is not None for row in summary.rows) else ""
    axes.set_xlabel(f"{key} ({direction} is better; dots: runs, bar: mean{paper})")
    axes.grid(axis="x", alpha=0.3)
    _title(figure, summary, width=85)
    return figure


def write_plots(summaries: Sequence[BlockSummary], out_dir: Path, ranks: RankTable | None = None) -> list[Path]:
    """Write ``<slug>-curves.png`` (when any run has a CSV log) and ``<slug>-test.png`` per block, and
    :data:`CD_PLOT` when ``ranks`` ranks at least two configurations; return the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    used: set[str] = set()
    for summary in summaries:
        slug = base = slugify(block_title(summary))
        suffix = 2
        while slug in used:
            slug, suffix = f"{base}-{suffix}", suffix + 1
        used.add(slug)
        curves = learning_curves(summary.block)
        if any(stats.val.epochs or stats.train_loss.epochs for stats in curves.values()):
            path = out_dir / f"{slug}-curves.png"
            curves_figure(summary, curves).savefig(path, dpi=100)
            written.append(path)
        else:
            log.warning("%s: no run has a readable %s; no learning curves written", block_title(summary), METRICS_CSV)
        path = out_dir / f"{slug}-test.png"
        strip_figure(summary).savefig(path, dpi=100)
        written.append(path)
    if ranks is not None and len(ranks.configs) >= 2:
        path = out_dir / CD_PLOT
        cd_figure(ranks).savefig(path, dpi=100)
        written.append(path)
    return written


def log_to_wandb(paths: Sequence[Path], project: str, run_dir: Path) -> str | None:
    """Log the PNGs as images of one new W&B run (``job_type="report"``); ``None``, or why it failed in one line.

    Never raises: the plots are already on disk, so a W&B failure (no network, no API key) only costs
    the upload. The run's files go below ``$WANDB_DIR`` when set, else below ``run_dir``;
    ``WANDB_MODE=offline`` writes an offline run there for a later ``wandb sync``.
    """
    try:
        import wandb  # imported here: slow to import, and needed only with --wandb-project

        run = wandb.init(
            project=project,
            job_type="report",
            dir=os.environ.get("WANDB_DIR") or str(run_dir),
            config={"plots": [path.name for path in paths]},
        )
        try:
            run.log({path.stem: wandb.Image(str(path)) for path in paths})
        finally:
            run.finish()
    except Exception as exc:
        first_line = (str(exc).strip().splitlines() or [""])[0]
        return f"{type(exc).__name__}: {first_line}"
    return None
