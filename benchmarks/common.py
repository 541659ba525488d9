"""What every benchmark shares: the run context, result rows with their targets, composed configs,
interleaved repeats and the markdown table."""

from __future__ import annotations

import os
import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import DictConfig, open_dict

T = TypeVar("T")

#: the generated dataset that quick (smoke-test) runs train on: no raw files needed, seconds per run
QUICK_CYCLES = ["dataset=cycles", "dataset.num_train=64", "dataset.num_val=32", "dataset.num_test=32", "dataset.batch_size=32"]

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "conf"


@dataclass(frozen=True)
class Context:
    """Options of one benchmark run."""

    data_dir: Path
    cache_dir: Path
    work_dir: Path  # run directories and scratch files
    quick: bool = False
    repeats: int = 3

    def has_raw(self, relpath: str) -> bool:
        return (self.data_dir / relpath).exists()


@dataclass(frozen=True)
class Target:
    """``figure <op> value``, e.g. ``Target("<=", 1.05, "x")``."""

    op: Literal["<=", ">=", "<"]
    value: float
    unit: str = "x"

    def met(self, figure: float) -> bool:
        return {"<=": figure <= self.value, ">=": figure >= self.value, "<": figure < self.value}[self.op]

    def miss(self, figure: float) -> str:
        """By how much ``figure`` misses the target, in words."""
        if self.op == ">=":
            return f"missed: {self.fmt(figure)}, {100 * (1 - figure / self.value):.0f}% short of {self.fmt(self.value)}"
        over = f"{100 * (figure / self.value - 1):.0f}% over" if self.value else "over"
        return f"missed: {self.fmt(figure)}, {over} {self.fmt(self.value)}"

    def fmt(self, v: float) -> str:
        return f"{v:.2f}{self.unit}" if self.unit in ("x", " s") else f"{v:.1f}{self.unit}"

    def __str__(self) -> str:
        return f"{self.op} {self.fmt(self.value)}"


@dataclass
class Row:
    """One line of the results table. ``figure`` is what is checked against ``target``."""

    benchmark: str
    case: str
    graphbench: str = "—"
    reference: str = "—"
    figure: float | None = None
    target: Target | None = None
    note: str = ""
    skipped: str = field(default="")

    @property
    def verdict(self) -> str:
        if self.skipped:
            return f"skipped: {self.skipped}"
        if self.target is None or self.figure is None:
            return "reported"
        return "met" if self.target.met(self.figure) else self.target.miss(self.figure)

    def cells(self) -> list[str]:
        figure = self.target.fmt(self.figure) if self.target and self.figure is not None else "—"
        return [
            self.benchmark,
            self.case,
            self.graphbench,
            self.reference,
            figure,
            str(self.target or "—"),
            self.verdict,
            self.note,
        ]


HEADER = ["benchmark", "case", "graphbench", "reference", "figure", "target", "verdict", "notes"]


def markdown_table(rows: Sequence[Row]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def interleaved(contenders: dict[str, Callable[[], float]], repeats: int) -> dict[str, list[float]]:
    """Call every contender ``repeats`` times, alternating their order each round, and collect
    the figures they return (a contender returns its own measurement, e.g. seconds)."""
    names = list(contenders)
    out: dict[str, list[float]] = {n: [] for n in names}
    for r in range(repeats):
        for name in names if r % 2 == 0 else names[::-1]:
            out[name].append(contenders[name]())
    return out


def paired_ratio(numerator: Sequence[float], denominator: Sequence[float]) -> float:
    """Median of the per-round ratios: rounds run back to back, so each pair saw the same load."""
    return median([a / b for a, b in zip(numerator, denominator)])


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    """Wall seconds of ``fn()``, and its result."""
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def compose_config(ctx: Context, overrides: Sequence[str], run_dir: Path) -> DictConfig:
    """``conf/config.yaml`` composed as ``run.py`` would, with the run directory set."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(
            "config",
            overrides=[f"paths.data_dir={ctx.data_dir}", f"paths.cache_dir={ctx.cache_dir}", *overrides],
            return_hydra_config=True,
        )
    GlobalHydra.instance().clear()
    with open_dict(cfg):
        cfg.paths.output_dir = str(run_dir)
        del cfg["hydra"]
    return cfg


def slug(text: str) -> str:
    """``text`` as a file name that Hydra's override grammar accepts unquoted."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")


def fmt_s(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def chosen_from_env(variable: str, choices: tuple[str, ...], what: str) -> tuple[str, ...]:
    """The names listed in the environment ``variable`` (comma-separated), or every one of ``choices``;
    a name not among them is a ``ValueError`` naming the valid ones (``what``: the kind of name)."""
    value = os.environ.get(variable, "").strip()
    if not value:
        return choices
    chosen = tuple(name.strip() for name in value.split(",") if name.strip())
    unknown = sorted(set(chosen) - set(choices))
    if unknown:
        raise ValueError(f"{variable}: unknown {what}(s) {unknown}; valid: {list(choices)}")
    return chosen
