"""Command line: ``python -m graphbench.report <multirun dir> [more dirs] [--csv] [--alpha A]``.

Prints the report to stdout. Exit status: 0 if at least one run completed, 1 if every run
failed (the failed runs are still printed), 2 for a bad argument (a directory that does
not exist or holds no ``results.json``; the message names it).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from graphbench.report.collect import ReportInputError, collect
from graphbench.report.stats import DEFAULT_ALPHA, summarize_block
from graphbench.report.table import format_csv, format_markdown


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m graphbench.report``."""
    parser = argparse.ArgumentParser(
        prog="python -m graphbench.report",
        description=(
            "Aggregate results.json files found recursively under Hydra run/multirun directories: "
            "one row per configuration (config minus the seed and keys derived from it, paths, logger, hydra and per-run output "
            "paths), mean ± sample std (ddof=1) over seeds, Welch's t-test vs the best group, "
            "failed runs, and IGB rank stability (inversion number)."
        ),
    )
    parser.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="Hydra multirun (or run) directory")
    parser.add_argument("--csv", action="store_true", help="print CSV instead of a markdown report")
    parser.add_argument("--alpha", type=float, default=DEFAULT_ALPHA, help=f"significance level (default {DEFAULT_ALPHA})")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not 0.0 < args.alpha < 1.0:
        parser.error(f"--alpha must lie in (0, 1), got {args.alpha}")
    try:
        collection = collect(args.dirs)
    except ReportInputError as err:
        parser.error(str(err))
    summaries = [summarize_block(block, alpha=args.alpha) for block in collection.blocks]
    render = format_csv if args.csv else format_markdown
    sys.stdout.write(render(summaries, collection.failed))
    return 0 if summaries else 1


if __name__ == "__main__":
    sys.exit(main())
