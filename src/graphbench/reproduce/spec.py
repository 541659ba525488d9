r"""A paper's table as data: ``conf/reproduce/<NAME>.yaml`` read into a typed :class:`TableSpec`.

One YAML file per table, no Python per paper. Its keys::

    title: "Kipf & Welling 2017, Table 2: GCN on the public Planetoid splits"
    source: "Kipf & Welling, ICLR 2017 (arXiv:1609.02907), Table 2"
    metric: {key: test/accuracy, label: "test accuracy (%)", scale: 100}
    seeds: 10                  # runs per cell (per fold): the default of --seeds
    folds: []                  # dataset.split_index values every cell runs (empty: no folds)
    rows: [Cora, CiteSeer]     # the layout: row labels, in order
    columns: [GCN]             # column labels, in order
    cost: {cpu_minutes_per_run: 1.0, gpu_minutes_per_run: 0.3, gpu_memory_gb: 1, basis: "how it was estimated"}
    fast: [trainer.max_epochs=2]   # overrides of --fast (one seed, first fold)
    rank_stability: false      # true: IGB's and the all-pairs inversion number of each column's rows
    notes: ["..."]             # printed under the table
    cells:
      - row: Cora
        column: GCN
        overrides: [experiment=planetoid/cora-gcn]   # the cell's Hydra overrides (seeds and folds are added)
        data: [Planetoid/Cora/raw]                   # paths below the data root the cell needs
        paper: {value: 81.5, std: null, source: "Kipf & Welling 2017, Table 2"}   # or null, with paper_note

A cell may also set its own ``metric``, ``fast`` (added to the table's) and ``cost``. Paper values are
in the paper's unit; ours are ``metric.scale`` times the runs' ``metric.key`` (0.815 -> 81.5).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from graphbench.report.literature import PaperValue

#: the folder of the table files below the config directory (``conf/reproduce/``)
SPEC_FOLDER: str = "reproduce"
#: the keys a table file may hold, and those a cell may hold
TABLE_KEYS: frozenset[str] = frozenset(
    {"title", "source", "metric", "seeds", "folds", "rows", "columns", "cost", "fast", "rank_stability", "notes", "cells"}
)
CELL_KEYS: frozenset[str] = frozenset({"row", "column", "overrides", "data", "paper", "paper_note", "metric", "fast", "cost"})


class SpecError(Exception):
    """Bad input: an unknown table name, a table file off the schema or an option out of range; the message says which."""


@dataclass(frozen=True)
class Metric:
    """What a cell reports: ``scale`` times the runs' ``key`` (a ``results.json`` metric), shown as ``label``."""

    key: str
    label: str
    scale: float = 1.0
    higher_is_better: bool = True

    @property
    def name(self) -> str:
        """The metric's name without its split: ``accuracy`` for ``test/accuracy``."""
        return self.key.split("/", 1)[-1]


@dataclass(frozen=True)
class Cost:
    """Estimated minutes per run on the machines of this project: a 2-core CPU and one GPU; GPU memory per run."""

    cpu_minutes_per_run: float
    gpu_minutes_per_run: float
    gpu_memory_gb: float
    basis: str = ""


@dataclass(frozen=True)
class Cell:
    """One cell of the table: a Hydra multirun (``overrides`` plus the table's seeds and folds) and the paper's value.

    ``paper`` is ``None`` when the paper's number is not recorded; ``paper_note`` then says why."""

    row: str
    column: str
    overrides: tuple[str, ...]
    data: tuple[str, ...]
    paper: PaperValue | None
    metric: Metric
    cost: Cost
    fast: tuple[str, ...] = ()
    paper_note: str = ""

    @property
    def label(self) -> str:
        """``Cora / GCN``."""
        return f"{self.row} / {self.column}"

    @property
    def slug(self) -> str:
        """The cell's directory name: ``cora-gcn``."""
        return slugify(f"{self.row}-{self.column}")


@dataclass(frozen=True)
class TableSpec:
    """A paper's table: its cells, layout, default seeds and folds, fast overrides and cost."""

    name: str
    title: str
    source: str
    seeds: int
    folds: tuple[int, ...]
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    cells: tuple[Cell, ...]
    fast: tuple[str, ...]
    rank_stability: bool = False
    notes: tuple[str, ...] = ()

    def ordered_cells(self) -> list[Cell]:
        """The cells in layout order: by row, then by column."""
        return sorted(self.cells, key=lambda cell: (self.rows.index(cell.row), self.columns.index(cell.column)))


def slugify(text: str) -> str:
    """``Cora / GCN`` -> ``cora-gcn``: lower case, runs of other characters than ``[a-z0-9.]`` as one ``-``."""
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")


def _require(node: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = node.get(key)
    if isinstance(value, bool) or not isinstance(value, kind):  # YAML's true is no number
        raise SpecError(f"{where}: '{key}' must be {getattr(kind, '__name__', kind)}, got {value!r}")
    return value


def _strings(value: Any, key: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise SpecError(f"{where}: '{key}' must be a list of strings, got {value!r}")
    return tuple(value)


def _unknown(node: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
    extra = sorted(set(node) - allowed)
    if extra:
        raise SpecError(f"{where}: unknown key(s) {extra}; valid: {sorted(allowed)}")


def parse_metric(node: Any, where: str) -> Metric:
    if not isinstance(node, dict):
        raise SpecError(f"{where}: 'metric' must be a mapping {{key, label, scale, higher_is_better}}, got {node!r}")
    _unknown(node, frozenset({"key", "label", "scale", "higher_is_better"}), f"{where} metric")
    key = _require(node, "key", str, f"{where} metric")
    return Metric(
        key=key,
        label=str(node.get("label", key)),
        scale=float(node.get("scale", 1.0)),
        higher_is_better=bool(node.get("higher_is_better", True)),
    )


def parse_cost(node: Any, where: str) -> Cost:
    if not isinstance(node, dict):
        raise SpecError(f"{where}: 'cost' must be a mapping, got {node!r}")
    _unknown(node, frozenset({"cpu_minutes_per_run", "gpu_minutes_per_run", "gpu_memory_gb", "basis"}), f"{where} cost")
    return Cost(
        cpu_minutes_per_run=float(_require(node, "cpu_minutes_per_run", (int, float), f"{where} cost")),
        gpu_minutes_per_run=float(_require(node, "gpu_minutes_per_run", (int, float), f"{where} cost")),
        gpu_memory_gb=float(_require(node, "gpu_memory_gb", (int, float), f"{where} cost")),
        basis=str(node.get("basis", "")),
    )


def parse_paper(node: Any, metric: Metric, where: str) -> PaperValue | None:
    """A cell's ``paper: {value, std, source}`` as a :class:`~graphbench.report.literature.PaperValue`, or ``None``."""
    if node is None:
        return None
    if not isinstance(node, dict):
        raise SpecError(f"{where}: 'paper' must be {{value, std, source}} or null, got {node!r}")
    _unknown(node, frozenset({"value", "std", "source"}), f"{where} paper")
    value = _require(node, "value", (int, float), f"{where} paper")
    std = node.get("std")
    if std is not None and (not isinstance(std, (int, float)) or isinstance(std, bool) or std < 0):
        raise SpecError(f"{where}: paper 'std' must be a non-negative number or null, got {std!r}")
    source = _require(node, "source", str, f"{where} paper")
    return PaperValue(metric=metric.name, value=float(value), source=source, std=None if std is None else float(std))


def parse_cell(node: Any, index: int, metric: Metric, cost: Cost, where: str) -> Cell:
    at = f"{where} cells[{index}]"
    if not isinstance(node, dict):
        raise SpecError(f"{at}: a cell must be a mapping, got {node!r}")
    _unknown(node, CELL_KEYS, at)
    cell_metric = parse_metric(node["metric"], at) if "metric" in node else metric
    paper = parse_paper(node.get("paper"), cell_metric, at)
    note = str(node.get("paper_note") or "")
    if paper is None and not note:
        raise SpecError(f"{at}: 'paper' is null: add 'paper_note' saying why the paper's value is not recorded")
    return Cell(
        row=str(_require(node, "row", str, at)),
        column=str(_require(node, "column", str, at)),
        overrides=_strings(node.get("overrides"), "overrides", at),
        data=_strings(node.get("data"), "data", at),
        paper=paper,
        metric=cell_metric,
        cost=parse_cost(node["cost"], at) if "cost" in node else cost,
        fast=_strings(node.get("fast"), "fast", at),
        paper_note=note,
    )


def parse_spec(name: str, node: Any, where: str) -> TableSpec:
    """The :class:`TableSpec` of a table file's content ``node``; :class:`SpecError` names what is wrong."""
    if not isinstance(node, dict):
        raise SpecError(f"{where}: a table file must be a mapping, got {type(node).__name__}")
    _unknown(node, TABLE_KEYS, where)
    metric = parse_metric(node.get("metric"), where)
    cost = parse_cost(node.get("cost"), where)
    seeds = _require(node, "seeds", int, where)
    if seeds < 1:
        raise SpecError(f"{where}: 'seeds' must be at least 1, got {seeds}")
    folds = node.get("folds") or []
    if not isinstance(folds, list) or not all(isinstance(f, int) and not isinstance(f, bool) for f in folds):
        raise SpecError(f"{where}: 'folds' must be a list of integers (dataset.split_index values), got {folds!r}")
    rows, columns = _strings(node.get("rows"), "rows", where), _strings(node.get("columns"), "columns", where)
    cells_node = _require(node, "cells", list, where)
    cells = tuple(parse_cell(cell, i, metric, cost, where) for i, cell in enumerate(cells_node))
    if not cells:
        raise SpecError(f"{where}: 'cells' is empty")
    seen: set[tuple[str, str]] = set()
    for cell in cells:
        if cell.row not in rows or cell.column not in columns:
            raise SpecError(f"{where}: cell {cell.label!r} is not in the layout (rows {list(rows)}, columns {list(columns)})")
        if (cell.row, cell.column) in seen:
            raise SpecError(f"{where}: cell {cell.label!r} is listed twice")
        seen.add((cell.row, cell.column))
    return TableSpec(
        name=name,
        title=str(_require(node, "title", str, where)),
        source=str(_require(node, "source", str, where)),
        seeds=seeds,
        folds=tuple(folds),
        rows=rows,
        columns=columns,
        cells=cells,
        fast=_strings(node.get("fast"), "fast", where),
        rank_stability=bool(node.get("rank_stability", False)),
        notes=_strings(node.get("notes"), "notes", where),
    )


def spec_names(config_dir: Path) -> list[str]:
    """Every table name: the ``conf/reproduce/*.yaml`` stems, sorted."""
    return sorted(path.stem for path in (config_dir / SPEC_FOLDER).glob("*.yaml"))


def closest_names(name: str, names: Sequence[str]) -> list[str]:
    """Up to three valid names closest to ``name``: those containing it, then :func:`difflib.get_close_matches`
    (cutoff 0.4); empty when none is close."""
    containing = [valid for valid in names if name.lower() in valid]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.4)
    return list(dict.fromkeys([*containing, *close]))[:3]


def load_spec(name: str, config_dir: Path) -> TableSpec:
    """Read ``<config_dir>/reproduce/<name>.yaml``; an unknown ``name`` raises :class:`SpecError` naming the closest ones."""
    path = config_dir / SPEC_FOLDER / f"{name}.yaml"
    if not path.is_file():
        names = spec_names(config_dir)
        close = closest_names(name, names)
        hint = f"closest: {', '.join(close)}" if close else f"valid: {', '.join(names)}"
        raise SpecError(f"unknown table {name!r}; {hint} (see --list)")
    return parse_spec(name, yaml.safe_load(path.read_text()), f"{SPEC_FOLDER}/{name}.yaml")
