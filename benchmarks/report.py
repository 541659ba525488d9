"""The benchmark record and the page made from it: every full run of ``python -m benchmarks`` stores its
rows with the command line that made them in ``benchmarks/results.json`` and renders
``docs/performance.md`` from that file, so the page is regenerated, never edited by hand.

A run's rows replace the stored rows of the same benchmark (a table row's first cell, e.g.
``pe: precompute`` or ``samplers: neighbor``), so a partial run (``--only memory``, or
``GRAPHBENCH_BENCH_SAMPLERS=neighbor``) updates its rows and keeps the others with their own
command lines; a stored run left without rows is dropped. ``python -m benchmarks --render``
re-renders the page from the stored record without running anything. The page ends with the
profile of a training step that ``python -m benchmarks.profile_step --output benchmarks/profile.md``
stores (:data:`PROFILE_PATH`), when there is one.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import REPO, Row, Target, markdown_table

#: where a full run stores its rows, and the page rendered from them
RESULTS_PATH: Path = REPO / "benchmarks" / "results.json"
DOCS_PATH: Path = REPO / "docs" / "performance.md"
#: the stored profile of a training step (``benchmarks/profile_step.py``), the page's last section
PROFILE_PATH: Path = REPO / "benchmarks" / "profile.md"
SCHEMA_VERSION: int = 1


@dataclass
class BenchRun:
    """One invocation of the runner: its command line (environment variables that change what runs
    included), when and where it ran, and the rows it measured that are still current."""

    command: str
    date: str
    commit: str
    machine: str
    rows: list[Row] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {**{k: v for k, v in asdict(self).items() if k != "rows"}, "rows": [asdict(row) for row in self.rows]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BenchRun:
        rows = [Row(**{**row, "target": Target(**row["target"]) if row.get("target") else None}) for row in data["rows"]]
        return cls(command=data["command"], date=data["date"], commit=data["commit"], machine=data["machine"], rows=rows)


def load_runs(path: Path) -> list[BenchRun]:
    """The runs stored in ``path`` (none when it does not exist)."""
    if not path.exists():
        return []
    data = json.loads(path.read_text())
    if data.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"{path}: schema_version {data.get('schema_version')!r}; this runner reads {SCHEMA_VERSION}")
    return [BenchRun.from_dict(run) for run in data["runs"]]


def merged(runs: Sequence[BenchRun], new: BenchRun) -> list[BenchRun]:
    """``runs`` with ``new`` added last: stored rows of a benchmark that ``new`` measured are dropped,
    and so is a stored run left without rows."""
    measured = {row.benchmark for row in new.rows}
    kept = [
        BenchRun(r.command, r.date, r.commit, r.machine, [row for row in r.rows if row.benchmark not in measured]) for r in runs
    ]
    return [r for r in kept if r.rows] + [new]


def save_runs(path: Path, runs: Sequence[BenchRun]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"schema_version": SCHEMA_VERSION, "runs": [run.to_dict() for run in runs]}, indent=1, ensure_ascii=False)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text + "\n")
    tmp.replace(path)


def group_of(row: Row) -> str:
    """``reference: time / training epoch`` -> ``reference``: the benchmark module a row comes from."""
    return row.benchmark.split(":", 1)[0]


def markdown(text: str) -> str:
    """``text`` with Sphinx roles (``:class:`~a.B```) written as plain code spans, and reST's double
    backticks as Markdown's single ones."""
    return re.sub(r":\w+:`~?([^`]+)`", r"`\1`", text).replace("``", "`")


def module_docstring(group: str) -> str:
    """The docstring of ``benchmarks/<group>.py`` (read without importing it): what its rows compare."""
    path = REPO / "benchmarks" / f"{group}.py"
    if not path.exists():
        return ""
    return ast.get_docstring(ast.parse(path.read_text())) or ""


def summary(group: str) -> str:
    """The first sentence of ``benchmarks/<group>.py``'s docstring, on one line, in Markdown."""
    paragraph = " ".join(module_docstring(group).split("\n\n", 1)[0].split())
    return markdown(re.split(r"(?<=\.)\s+(?=[A-Z])", paragraph, maxsplit=1)[0])


def render_page(runs: Sequence[BenchRun], groups: Sequence[str], profile: str = "") -> str:
    """``docs/performance.md`` from ``runs``: the regenerating command on top, what each group
    measures (one line, its module's docstring's first sentence) with the command that reruns it,
    then one table per run (its command line, date, commit and machine above it), then ``profile``
    (markdown, :data:`PROFILE_PATH`'s) when given. ``groups``: the benchmark names in table order."""
    order = {name: i for i, name in enumerate(groups)}
    ordered = sorted(runs, key=lambda run: min(order.get(group_of(row), len(order)) for row in run.rows))
    lines = [
        "# Performance (`benchmarks/`)",
        "",
        "<!-- generated by `python -m benchmarks` (benchmarks/report.py) from benchmarks/results.json: do not edit by hand -->",
        "",
        "Generated by the benchmark runner from `benchmarks/results.json`, not edited by hand. Every full run,",
        "",
        "    python -m benchmarks --data-dir ../shared/data",
        "",
        "(`--only <groups>` for some of them; `python -m benchmarks --render` redraws this page from the stored",
        "results), replaces the rows of the benchmarks it measured and keeps the others, each table under the",
        "command line that made it. Figures are medians of interleaved rounds in one process, so a ratio",
        "holds on a noisy machine; no test asserts a time.",
        "",
        "## What each group measures",
        "",
        "| group | what it measures (details: the module's docstring) | rerun |",
        "|---|---|---|",
    ]
    for group in groups:
        what = summary(group).replace("|", "\\|")
        lines.append(
            f"| [`{group}`](../benchmarks/{group}.py) | {what} | `python -m benchmarks --only {group} --data-dir ../shared/data` |"
        )
    for run in ordered:
        lines += [
            "",
            f"## {', '.join(dict.fromkeys(group_of(row) for row in run.rows))}",
            "",
            f"    {run.command}",
            "",
            f"on {run.date} at commit {run.commit}, {run.machine}:",
            "",
            markdown_table(run.rows),
        ]
    if profile:
        lines += ["", profile.strip()]
    return "\n".join(lines) + "\n"
