r"""From a table's cells to Hydra multirun commands, one per cell, with the run directories they write.

Cell :math:`c` with seeds :math:`s_1..s_S` and folds :math:`f_1..f_F` (none: :math:`F = 1`) is one
multirun of :math:`F \cdot S` runs::

    graphbench -m <cell overrides> [<fast overrides>] [<extra overrides>] seed=0,1,2 [dataset.split_index=0,...,9]
        resume=auto hydra.sweep.dir=<out>/<table>/<cell> 'hydra.sweep.subdir=seed${seed}' [launcher]

Each run's directory is named by its seed (and fold), not by Hydra's job number, so the directories do
not move when ``--seeds`` changes, and ``resume=auto`` skips a completed run, continues an interrupted
one and reruns a failed one (:mod:`~graphbench.reproduce.runner` moves a failed directory aside first).
A cell whose raw files are missing below the data root is planned as missing and never run.
"""

from __future__ import annotations

import math
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from graphbench.config.resolvers import first_existing_dir
from graphbench.report.collect import DEFAULT_FOLD_KEY
from graphbench.reproduce.spec import Cell, TableSpec

#: the console script that runs a cell's multirun (``graphbench``, :func:`graphbench.main.main`)
CONSOLE_SCRIPT: str = "graphbench"
#: the override that names a run's fold
FOLD_OVERRIDE: str = f"dataset.{DEFAULT_FOLD_KEY}"
#: the launchers ``--launcher`` accepts besides Hydra's basic one (``conf/hydra/launcher/``)
LAUNCHERS: tuple[str, ...] = ("joblib", "submitit_local", "submitit_slurm")


@dataclass(frozen=True)
class Options:
    """How a table is run: seeds per cell, fast smoke settings, jobs at once, launcher, output root, extra overrides.

    ``jobs > 1`` runs a cell's runs through the joblib launcher; ``launcher`` (``submitit_slurm``) replaces it."""

    seeds: int
    fast: bool
    jobs: int
    launcher: str | None
    out: Path
    extra: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunSlot:
    """One run of a cell: its seed, its fold (``None`` without folds) and its directory."""

    seed: int
    fold: int | None
    path: Path


@dataclass(frozen=True)
class CellPlan:
    """A cell's multirun: its command (as run and as printed), its sweep directory and runs, or why it is not run."""

    cell: Cell
    sweep_dir: Path
    runs: tuple[RunSlot, ...]
    overrides: tuple[str, ...]
    missing_data: tuple[str, ...] = ()

    @property
    def runnable(self) -> bool:
        return not self.missing_data

    @property
    def shown(self) -> str:
        """The command as a user types it: ``graphbench -m ...``, shell-quoted."""
        return " ".join([CONSOLE_SCRIPT, "-m", *(shlex.quote(arg) for arg in self.overrides)])

    def argv(self, executable: str = sys.executable) -> list[str]:
        """The command this process runs: the ``graphbench`` script beside ``executable`` (a venv's bin)."""
        script = Path(executable).with_name(CONSOLE_SCRIPT)
        head = [str(script)] if script.is_file() else [executable, "-c", "from graphbench.main import main; main()"]
        return [*head, "-m", *self.overrides]


@dataclass(frozen=True)
class TablePlan:
    """Every cell's plan, where the table's files go, and whether it is a fast smoke run."""

    spec: TableSpec
    options: Options
    table_dir: Path
    cells: tuple[CellPlan, ...]

    @property
    def runs(self) -> int:
        """Runs over the cells that are run."""
        return sum(len(plan.runs) for plan in self.cells if plan.runnable)

    def estimated_minutes(self, gpu: bool, runs_of: Callable[[CellPlan], int] | None = None) -> float:
        r""":math:`\sum_c n_c \, t_c`: runs times minutes per run over the runnable cells (sequential, one run at a
        time); :math:`n_c` is ``runs_of(cell)`` when given (e.g. the runs not completed yet), else all its runs."""
        return sum(
            (len(plan.runs) if runs_of is None else runs_of(plan))
            * (plan.cell.cost.gpu_minutes_per_run if gpu else plan.cell.cost.cpu_minutes_per_run)
            for plan in self.cells
            if plan.runnable
        )


def seeds_and_folds(spec: TableSpec, options: Options) -> tuple[list[int], list[int | None]]:
    """Seeds ``0..N-1`` (``--seeds`` or the spec's; one under ``--fast``) and the folds (the first under ``--fast``)."""
    seeds = list(range(1 if options.fast else options.seeds))
    folds: list[int | None] = list(spec.folds[:1] if options.fast else spec.folds) or [None]
    return seeds, folds


def missing_files(cell: Cell, data_root: Path) -> tuple[str, ...]:
    """The cell's ``data`` paths that do not exist below ``data_root``."""
    return tuple(str(data_root / path) for path in cell.data if not (data_root / path).exists())


def launcher_overrides(options: Options, runs: int) -> list[str]:
    """``hydra/launcher=...``: the named launcher, or joblib with ``min(jobs, runs)`` jobs when ``jobs > 1``."""
    if options.launcher is not None:
        return [f"hydra/launcher={options.launcher}"]
    jobs = min(options.jobs, runs)
    return ["hydra/launcher=joblib", f"hydra.launcher.n_jobs={jobs}"] if jobs > 1 else []


def plan_cell(spec: TableSpec, cell: Cell, options: Options, table_dir: Path, data_root: Path) -> CellPlan:
    """The multirun of one cell (see the module docstring)."""
    seeds, folds = seeds_and_folds(spec, options)
    sweep_dir = table_dir / cell.slug
    with_folds = folds != [None]
    subdir = f"fold${{{FOLD_OVERRIDE}}}-seed${{seed}}" if with_folds else "seed${seed}"
    runs = tuple(
        RunSlot(seed, fold, sweep_dir / (f"fold{fold}-seed{seed}" if fold is not None else f"seed{seed}"))
        for fold in folds
        for seed in seeds
    )
    overrides = [
        *cell.overrides,
        *((*spec.fast, *cell.fast) if options.fast else ()),
        *options.extra,
        f"seed={','.join(map(str, seeds))}",
        *([f"{FOLD_OVERRIDE}={','.join(str(f) for f in folds)}"] if with_folds else []),
        "resume=auto",
        f"hydra.sweep.dir={sweep_dir}",
        f"hydra.sweep.subdir={subdir}",
        *launcher_overrides(options, len(runs)),
    ]
    return CellPlan(cell, sweep_dir, runs, tuple(overrides), missing_files(cell, data_root))


def table_dir(spec: TableSpec, options: Options) -> Path:
    """``<out>/<name>``, or ``<out>/<name>-fast`` for a smoke run (its runs never mix with a reproduction's)."""
    return options.out / (f"{spec.name}-fast" if options.fast else spec.name)


def plan_table(spec: TableSpec, options: Options, data_root: Path) -> TablePlan:
    """Every cell's multirun, in layout order."""
    directory = table_dir(spec, options)
    cells = tuple(plan_cell(spec, cell, options, directory, data_root) for cell in spec.ordered_cells())
    return TablePlan(spec, options, directory, cells)


def data_root(extra: tuple[str, ...], environ: dict[str, str]) -> Path:
    """The raw-data root the runs read, by ``conf/paths/default.yaml``'s rule: ``paths.data_dir=`` among the
    extra overrides, else ``$GRAPHBENCH_DATA``, else ``./data`` if it exists, else ``../shared/data`` if it exists."""
    for override in reversed(extra):
        key, sep, value = override.lstrip("+").partition("=")
        if sep and key == "paths.data_dir":
            return Path(value)
    if environ.get("GRAPHBENCH_DATA"):
        return Path(environ["GRAPHBENCH_DATA"])
    return Path(first_existing_dir("./data", "../shared/data"))


def auto_jobs(cpu_count: int, gpu_memory_gb: float | None, per_run_gb: float) -> int:
    r"""Runs at once for ``--jobs auto``: :math:`\lfloor M / m \rfloor` runs on a GPU of :math:`M` GB when runs take
    :math:`m` GB each (at most the core count), else one per core; at least 1."""
    if gpu_memory_gb is not None and per_run_gb > 0:
        return max(1, min(cpu_count, math.floor(gpu_memory_gb / per_run_gb)))
    return max(1, cpu_count)
