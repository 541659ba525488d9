"""Command line: ``python -m graphbench.report <dirs> [--csv] [--alpha A] [--by-fold] [--reference-seed S] [--plots OUT_DIR]``.

A configuration's folds (``dataset.split_index``) and seeds are its replicates: one row each,
``--by-fold`` for one row per fold. With several datasets the report adds the rank table,
Friedman's test and Nemenyi's critical difference (:mod:`~graphbench.report.ranks`).

Prints the report to stdout; each table says what made its runs (code, packages, machines) and warns
for every row whose runs mix commits or package versions (with ``--csv``, those warnings go to
stderr). Exit status: 0 if at least one run completed, 1 if every run
failed (the failed runs are still printed), 2 for a bad argument (a directory that does
not exist or holds no ``results.json``; the message names it).

``--plots OUT_DIR`` also writes learning curves and test-metric strip plots (PNG, see
:mod:`~graphbench.report.plots`), and with several datasets the critical-difference diagram, and prints their paths to stderr, so stdout stays the report;
``--wandb-project NAME`` then logs them to a new W&B run (a failure to log is one warning on
stderr and changes neither the output nor the exit status).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from graphbench.report.collect import ReportInputError, collect
from graphbench.report.plots import log_to_wandb, write_plots
from graphbench.report.provenance import mixed_warnings
from graphbench.report.ranks import rank_table
from graphbench.report.stats import DEFAULT_ALPHA, summarize_block
from graphbench.report.table import block_title, format_csv, format_markdown
from graphbench.run.cli import program_name


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m graphbench.report``."""
    parser = argparse.ArgumentParser(
        prog=program_name("graphbench.report", "graphbench-report"),
        description=(
            "Aggregate results.json files found recursively under Hydra run/multirun directories: "
            "one row per configuration (config minus the seed, the fold and keys derived from them, paths, logger, hydra and "
            "per-run output paths), mean ± sample std (ddof=1) over folds x seeds, Holm-corrected Welch's t-tests vs the "
            "best group, a rank table with Friedman's test and Nemenyi's critical difference over several datasets, "
            "failed runs, and rank stability across seeds (IGB's and the all-pairs inversion number)."
        ),
    )
    parser.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="Hydra multirun (or run) directory")
    parser.add_argument("--csv", action="store_true", help="print CSV instead of a markdown report")
    parser.add_argument("--alpha", type=float, default=DEFAULT_ALPHA, help=f"significance level (default {DEFAULT_ALPHA})")
    parser.add_argument(
        "--by-fold",
        action="store_true",
        help="one row per fold (dataset.split_index or the dataset's fold_key) instead of pooling folds x seeds",
    )
    parser.add_argument(
        "--reference-seed",
        type=int,
        metavar="S",
        help="the seed whose ranking is the reference of IGB's inversion number (default: the smallest shared seed)",
    )
    parser.add_argument(
        "--plots",
        type=Path,
        metavar="OUT_DIR",
        help="also write learning curves (val metric and train loss, mean ± std over runs) and a strip plot of the "
        "test metric per block as PNGs into OUT_DIR, and the critical-difference diagram over several datasets",
    )
    parser.add_argument(
        "--wandb-project",
        metavar="NAME",
        help="log the --plots PNGs to a new W&B run in project NAME (WANDB_MODE=offline writes it locally)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not 0.0 < args.alpha < 1.0:
        parser.error(f"--alpha must lie in (0, 1), got {args.alpha}")
    if args.wandb_project is not None and args.plots is None:
        parser.error("--wandb-project logs the plots: add --plots OUT_DIR")
    try:
        collection = collect(args.dirs, by_fold=args.by_fold)
        summaries = [summarize_block(block, args.alpha, args.reference_seed) for block in collection.blocks]
    except ReportInputError as err:
        parser.error(str(err))
    except ValueError as err:
        if args.reference_seed is None:
            raise
        parser.error(f"--reference-seed: {err}")  # a seed that some group lacks
    ranks = rank_table(summaries, args.alpha)
    render = format_csv if args.csv else format_markdown
    sys.stdout.write(render(summaries, collection.failed, ranks))
    if args.csv:  # the markdown report has them under its tables; CSV rows have no place for them
        for summary in summaries:
            for warning in mixed_warnings(summary.block):
                print(f"{warning} [{block_title(summary)}]", file=sys.stderr)
    if args.plots is not None:
        paths = write_plots(summaries, args.plots, ranks)
        for path in paths:
            print(f"plot: {path}", file=sys.stderr)
        if args.wandb_project is not None and paths:
            failure = log_to_wandb(paths, args.wandb_project, args.plots)
            if failure is not None:
                print(f"warning: W&B logging failed ({failure}); the plots are in {args.plots}", file=sys.stderr)
    return 0 if summaries else 1


if __name__ == "__main__":
    sys.exit(main())
