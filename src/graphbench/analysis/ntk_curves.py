r"""NTK alignment curves over training: ``python -m graphbench.analysis.ntk_curves <run dir>... --plot out.png``.

Reads the ``ntk_alignment.csv`` that :class:`graphbench.callbacks.ntk.NTKAlignment` (``callbacks=ntk``)
writes into each run directory (one row per measurement, ``epoch`` = training epochs completed, 0 =
at initialisation) and plots, per run, the kernel-target alignment :math:`A(\Theta_t, YY^\top)`, the
kernel-graph alignment :math:`A(\Theta_t, \hat A^{2L})` and the graph-target alignment
:math:`A(\hat A^{2L}, YY^\top)` against the epoch: uncentred (NCMemo's definition) in the top row,
centred (CKA, as Yang et al. 2024 compute it) in the bottom row. Prints the first and last value of each
curve as a markdown table. A run is labelled by its dataset (and ``dataset.homophily`` when it has one)
from its ``results.json``, else by its directory name; ``--labels`` overrides.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from graphbench.vocabulary.errors import GraphbenchError

#: the callback's file in the run directory (``callbacks.ntk.csv_name``)
CSV_NAME: str = "ntk_alignment.csv"
#: (column stem, panel title) of the three alignments
CURVES: tuple[tuple[str, str], ...] = (
    ("ntk/kernel_target_alignment", r"kernel-target $A(\Theta_t, YY^\top)$"),
    ("ntk/kernel_graph_alignment", r"kernel-graph $A(\Theta_t, \hat{A}^{2L})$"),
    ("ntk/graph_target_alignment", r"graph-target $A(\hat{A}^{2L}, YY^\top)$"),
)
VARIANTS: tuple[tuple[str, str], ...] = (("", "uncentred (NCMemo)"), ("_centered", "centred (CKA)"))


def read_curves(run_dir: Path) -> dict[str, list[float]]:
    """``{column: values}`` of ``<run_dir>/ntk_alignment.csv``, sorted by epoch (empty cells: NaN)."""
    path = Path(run_dir) / CSV_NAME
    if not path.is_file():
        raise GraphbenchError(f"{path} not found: run the model with callbacks=ntk (it writes {CSV_NAME} into its run directory)")
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    if not rows or "epoch" not in rows[0]:
        raise GraphbenchError(f"{path} holds no NTK measurements (no rows with an 'epoch' column)")
    rows.sort(key=lambda row: float(row["epoch"]))
    return {key: [float(row[key]) if row.get(key) not in (None, "") else math.nan for row in rows] for key in rows[0]}


def run_label(run_dir: Path) -> str:
    """``<dataset> h=<homophily>`` from the run's ``results.json`` (``<dataset>`` without a homophily),
    else the directory's name."""
    try:
        config = json.loads((Path(run_dir) / "results.json").read_text())["config"]
        dataset = config["dataset"]
    except (OSError, ValueError, KeyError, TypeError):
        return Path(run_dir).name
    homophily = dataset.get("homophily")
    model = config.get("model", {}).get("name")
    label = dataset["name"] + (f" h={homophily}" if homophily is not None else "")
    return f"{model} on {label}" if model else label


def summary_table(curves: dict[str, dict[str, list[float]]]) -> str:
    """Markdown: per run and alignment, the value at the first and at the last measurement."""
    lines = ["| run | alignment | first epoch | last epoch | first | last |", "|---|---|---:|---:|---:|---:|"]
    for label, columns in curves.items():
        epochs = columns["epoch"]
        for stem, _ in CURVES:
            for suffix, _ in VARIANTS:
                values = columns.get(stem + suffix)
                if values is None:
                    continue
                name = stem.removeprefix("ntk/") + suffix
                lines.append(f"| {label} | {name} | {epochs[0]:.0f} | {epochs[-1]:.0f} | {values[0]:.4f} | {values[-1]:.4f} |")
    return "\n".join(lines) + "\n"


def plot_curves(curves: dict[str, dict[str, list[float]]], path: Path) -> Path:
    """A 2 x 3 grid (uncentred / centred x the three alignments), one line per run, saved as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(2, 3, figsize=(13, 7), sharex=True, squeeze=False)
    for row, (suffix, variant) in enumerate(VARIANTS):
        for col, (stem, title) in enumerate(CURVES):
            ax = axes[row][col]
            for label, columns in curves.items():
                if stem + suffix in columns:
                    ax.plot(columns["epoch"], columns[stem + suffix], marker=".", markersize=3, label=label)
            ax.set_title(f"{title}\n{variant}", fontsize=10)
            ax.grid(True, alpha=0.3)
            if row == len(VARIANTS) - 1:
                ax.set_xlabel("epoch")
    axes[0][0].set_ylabel("alignment")
    axes[1][0].set_ylabel("alignment")
    axes[0][0].legend(fontsize=9)
    figure.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m graphbench.analysis.ntk_curves",
        description=f"Plot the NTK alignment curves ({CSV_NAME}) of runs made with callbacks=ntk, and print their ends.",
    )
    parser.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR")
    parser.add_argument("--plot", type=Path, default=None, help="write the figure to this PNG")
    parser.add_argument("--labels", nargs="+", default=None, help="one legend label per run directory")
    args = parser.parse_args(argv)
    if args.labels is not None and len(args.labels) != len(args.run_dirs):
        parser.error(f"--labels names {len(args.labels)} runs but {len(args.run_dirs)} run directories were given")
    labels = args.labels or [run_label(d) for d in args.run_dirs]
    if len(set(labels)) < len(labels):  # two runs of one configuration: tell them apart by directory
        labels = [f"{label} ({d.name})" for label, d in zip(labels, args.run_dirs)]
    try:
        curves = {label: read_curves(d) for label, d in zip(labels, args.run_dirs)}
    except GraphbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(summary_table(curves))
    if args.plot is not None:
        print(f"figure: {plot_curves(curves, args.plot)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
