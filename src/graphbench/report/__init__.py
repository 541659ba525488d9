"""Aggregate training runs into fair comparison tables: ``python -m graphbench.report <dir>``.

:mod:`~graphbench.report.collect` loads and groups ``results.json`` files,
:mod:`~graphbench.report.stats` computes mean ± sample std, Welch's t-test vs the best
group and IGB rank stability, :mod:`~graphbench.report.table` renders markdown or CSV,
:mod:`~graphbench.report.plots` draws learning curves and test-metric strip plots (``--plots``).
See docs/report.md.

Also: :mod:`~graphbench.report.literature` (the paper column), :mod:`~graphbench.report.provenance`
(what made a table's runs), :mod:`~graphbench.report.ranks` (average ranks over datasets, Friedman
and Nemenyi); the command line is ``__main__``.
"""

from graphbench.report.collect import Collection, ReportInputError, collect
from graphbench.report.stats import BlockSummary, summarize_block
from graphbench.report.table import format_csv, format_markdown

__all__ = [
    "BlockSummary",
    "Collection",
    "ReportInputError",
    "collect",
    "format_csv",
    "format_markdown",
    "summarize_block",
]
