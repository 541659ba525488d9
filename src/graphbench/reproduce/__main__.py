"""Command line: ``graphbench-reproduce NAME [overrides ...] [--seeds N] [--jobs N|auto] [--launcher L] [--out DIR] [--fast] [--dry-run]``.

Runs the table ``conf/reproduce/NAME.yaml`` cell by cell (:mod:`~graphbench.reproduce.runner`), then
prints it as Markdown on stdout and writes ``table.md``, ``table.csv`` and ``NAME.png`` into
``<out>/NAME`` (``<out>/NAME-fast`` with ``--fast``); progress goes to stderr. Running the same command
again resumes: completed runs are skipped, interrupted ones continue, failed ones rerun. Trailing
``key=value`` overrides go to every run (``paths.data_dir=...``, ``trainer=gpu``,
``hydra.launcher.partition=gpu``). ``--list`` names every table with its cells and estimated cost.

Exit status: 0 when every run of the table's runnable cells completed (or ``--list``/``--dry-run``),
1 when some did not, 2 for bad input (an unknown NAME gets one line naming the closest valid ones),
130 when interrupted (run it again to resume).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from graphbench.conf import CONFIG_DIR
from graphbench.reproduce.plan import CellPlan, Options, TablePlan, auto_jobs, data_root, plan_table
from graphbench.reproduce.plot import write_plot
from graphbench.reproduce.runner import cpu_count, format_duration, launch_subprocess, run_cell, run_state, thread_env
from graphbench.reproduce.spec import SpecError, load_spec, spec_names
from graphbench.reproduce.table import cell_result, format_csv, format_markdown

#: where tables are written unless --out says otherwise
DEFAULT_OUT: Path = Path("multirun/reproduce")
#: ``--launcher`` values: Hydra launchers that run a cell's jobs elsewhere (``conf/hydra/launcher/``)
LAUNCHER_CHOICES: tuple[str, ...] = ("submitit_slurm", "submitit_local")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="graphbench-reproduce",
        description="Run a paper's table (conf/reproduce/NAME.yaml) and print ours beside the paper's values.",
    )
    parser.add_argument("name", nargs="?", metavar="NAME", help="the table (see --list)")
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="Hydra overrides added to every run")
    parser.add_argument("--list", action="store_true", help="every table with its paper, cells and estimated cost")
    parser.add_argument("--seeds", type=int, metavar="N", help="seeds per cell (and fold): 0..N-1 (default: the table's)")
    parser.add_argument(
        "--jobs", default="1", metavar="N|auto", help="runs at once on this machine (joblib launcher); auto: cores, or GPU memory"
    )
    parser.add_argument("--launcher", choices=LAUNCHER_CHOICES, help="run each cell as a job array (docs/cluster.md)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output root (default {DEFAULT_OUT})")
    parser.add_argument("--fast", action="store_true", help="a smoke run: tiny epochs, one seed, first fold; not a reproduction")
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    return parser


def gpu_memory_gb() -> float | None:
    """The first CUDA device's memory in GB, or ``None`` without one."""
    import torch

    if not torch.cuda.is_available():
        return None
    return torch.cuda.get_device_properties(0).total_memory / 2**30


def parse_jobs(value: str, per_run_gb: float) -> int:
    """``--jobs``: a positive integer, or ``auto`` (:func:`~graphbench.reproduce.plan.auto_jobs`)."""
    if value == "auto":
        return auto_jobs(cpu_count(), gpu_memory_gb(), per_run_gb)
    if not value.isdigit() or int(value) < 1:
        raise SpecError(f"--jobs must be a positive integer or auto, got {value!r}")
    return int(value)


def runs_to_do(cell: CellPlan) -> int:
    """The runs of a cell that running the table starts or continues: those whose directory holds no completed run."""
    return sum(1 for slot in cell.runs if run_state(slot) != "completed")


def estimate(plan: TablePlan) -> str:
    """``6 runs; estimated 6 min on a 2-core CPU, 2 min on one GPU (one run at a time)``, over the runnable cells and
    the runs not completed yet (``6 runs (4 completed already, 2 to run); ...``). The costs are those of full runs,
    so a ``--fast`` smoke run is not estimated."""
    total = plan.runs
    left = sum(runs_to_do(cell) for cell in plan.cells if cell.runnable)
    head = f"{total} run{'s' if total != 1 else ''}" + (
        f" ({total - left} completed already, {left} to run)" if left != total else ""
    )
    if plan.options.fast:
        return f"{head} on --fast's smoke settings; not estimated (the table's costs are those of full runs)"
    if total and not left:
        return f"{head}; nothing to run"
    cpu = format_duration(60 * plan.estimated_minutes(False, runs_to_do))
    gpu = format_duration(60 * plan.estimated_minutes(True, runs_to_do))
    return f"{head}; estimated {cpu} on a 2-core CPU, {gpu} on one GPU (one run at a time)"


def list_tables(config_dir: Path, root: Path) -> str:
    """One block per table: name, title, source, cells (missing data here), and the runs and cost of its runnable
    cells at its default seeds."""
    lines = []
    for name in spec_names(config_dir):
        spec = load_spec(name, config_dir)
        plan = plan_table(spec, Options(spec.seeds, False, 1, None, DEFAULT_OUT), root)
        missing = sum(1 for cell in plan.cells if not cell.runnable)
        folds = f" × {len(spec.folds)} folds" if spec.folds else ""
        lines += [
            f"{name}: {spec.title}",
            f"    source: {spec.source}",
            f"    cells: {len(spec.cells)}"
            + (f" ({missing} with raw files missing under {root}: not run)" if missing else "")
            + f"; {spec.seeds} seed{'s' if spec.seeds != 1 else ''}{folds}; "
            + (
                f"the {len(spec.cells) - missing} runnable cell{'s' if len(spec.cells) - missing != 1 else ''}: "
                if missing
                else ""
            )
            + estimate(plan),
        ]
    return "\n".join(lines) + "\n"


def dry_run(plan: TablePlan) -> str:
    """The commands, one per cell, and the cells not run."""
    lines = [f"# {plan.spec.name}: {plan.spec.title} -> {plan.table_dir}", f"# {estimate(plan)}"]
    for cell in plan.cells:
        if cell.runnable:
            lines += [f"# {cell.cell.label}: {len(cell.runs)} runs", cell.shown]
        else:
            lines += [f"# {cell.cell.label}: not run, raw files missing: {', '.join(cell.missing_data)}"]
    return "\n".join(lines) + "\n"


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_table(plan: TablePlan) -> int:
    """Run every runnable cell, write and print the table; the exit status."""
    say(f"{plan.spec.name}: {estimate(plan)}; output {plan.table_dir}")
    env = thread_env(os.environ, plan.options.jobs, cpu_count())
    try:
        for cell in plan.cells:
            if cell.runnable:
                run_cell(cell, env, launch_subprocess, say)
            else:
                say(f"{cell.cell.label}: not run, raw files missing: {', '.join(cell.missing_data)}")
    except KeyboardInterrupt:
        say("interrupted: run the same command again to resume")
        return 130
    results = [cell_result(cell) for cell in plan.cells]
    markdown = format_markdown(plan, results)
    plan.table_dir.mkdir(parents=True, exist_ok=True)
    (plan.table_dir / "table.md").write_text(markdown)
    (plan.table_dir / "table.csv").write_text(format_csv(plan, results))
    png = write_plot(plan.spec.title, results, plan.table_dir / f"{plan.spec.name}.png", plan.options.fast)
    sys.stdout.write(markdown)
    sys.stdout.flush()
    say(f"wrote {plan.table_dir / 'table.md'}, {plan.table_dir / 'table.csv'}, {png}")
    incomplete = sum(len(cell.runs) - r.n for cell, r in zip(plan.cells, results) if cell.runnable)
    return 0 if incomplete == 0 else 1


def main(argv: Sequence[str] | None = None, config_dir: Path = CONFIG_DIR) -> int:
    """Run the CLI; return the exit status."""
    args = build_parser().parse_intermixed_args(argv)  # overrides may follow the options
    if args.name is not None and "=" in args.name:  # --list key=value: an override, not a table
        args.name, args.overrides = None, [args.name, *args.overrides]
    try:
        root = data_root(tuple(args.overrides), dict(os.environ))
        if args.list:
            sys.stdout.write(list_tables(config_dir, root))
            return 0
        if args.name is None:
            raise SpecError(f"name a table: {', '.join(spec_names(config_dir))} (see --list)")
        spec = load_spec(args.name, config_dir)
        if args.seeds is not None and args.seeds < 1:
            raise SpecError(f"--seeds must be at least 1, got {args.seeds}")
        if args.launcher is not None and args.jobs != "1":
            raise SpecError(f"--jobs runs jobs on this machine; with --launcher {args.launcher} the scheduler does")
        per_run_gb = max(cell.cost.gpu_memory_gb for cell in spec.cells)
        options = Options(
            seeds=args.seeds or spec.seeds,
            fast=args.fast,
            jobs=parse_jobs(args.jobs, per_run_gb),
            launcher=args.launcher,
            out=args.out,
            extra=tuple(args.overrides),
        )
    except SpecError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    plan = plan_table(spec, options, root)
    if args.dry_run:
        sys.stdout.write(dry_run(plan))
        return 0
    return run_table(plan)


if __name__ == "__main__":
    sys.exit(main())
