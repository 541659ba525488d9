"""The benchmark runner: ``python -m benchmarks [--only a,b] [--quick] [--repeats N] ...``.

A full run stores its rows in ``benchmarks/results.json`` and regenerates ``docs/performance.md`` from it
(:mod:`benchmarks.report`); a ``--quick`` run (figures not meaningful) writes neither unless ``--results``
or ``--docs`` name files; ``--render`` only regenerates the page."""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib
import logging
import multiprocessing
import os
import shutil
import sys
import tempfile
import traceback
import warnings
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from benchmarks.common import REPO, Context, Row, markdown_table
from benchmarks.report import DOCS_PATH, PROFILE_PATH, RESULTS_PATH, BenchRun, load_runs, merged, render_page, save_runs
from graphbench.run.provenance import code_version, cpu_model

#: benchmark name -> module with ``run(ctx) -> list[Row]``, in table order
BENCHMARKS: dict[str, str] = {
    "reference": "benchmarks.reference",
    "overhead": "benchmarks.overhead",
    "dispatch": "benchmarks.dispatch",
    "preprocess": "benchmarks.preprocess",
    "pe": "benchmarks.pe",
    "pipeline": "benchmarks.pipeline",
    "memory": "benchmarks.memory",
    "samplers": "benchmarks.samplers",
    "contention": "benchmarks.contention",
}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--only", default=",".join(BENCHMARKS), help=f"comma-separated subset of {list(BENCHMARKS)}")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test of the harness, figures not meaningful")
    parser.add_argument("--repeats", type=int, default=None, help="interleaved rounds per comparison (default 3; 1 with --quick)")
    parser.add_argument(
        "--data-dir", type=Path, default=Path(os.environ.get("GRAPHBENCH_DATA", "data")), help="raw-data root (read-only)"
    )
    parser.add_argument(
        "--cache-dir", type=Path, default=None, help="processed-data cache, kept between runs (default: a temporary one)"
    )
    parser.add_argument(
        "--threads", type=int, default=None, help="torch intra-op threads (default: torch's choice); set for subprocesses too"
    )
    parser.add_argument("--output", type=Path, default=None, help="also write the markdown table to this file")
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help=f"the stored results to update (default {RESULTS_PATH.relative_to(REPO)}; --quick: none)",
    )
    parser.add_argument(
        "--docs",
        type=Path,
        default=None,
        help=f"the page rendered from them (default {DOCS_PATH.relative_to(REPO)}; --quick: none)",
    )
    parser.add_argument("--render", action="store_true", help="run nothing: regenerate the page from the stored results")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.only.split(",")) - set(BENCHMARKS))
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; valid: {list(BENCHMARKS)}")
    return args


def run_one(name: str, ctx: Context) -> list[Row]:
    """The rows of one benchmark; a failure becomes a row that says what went wrong, so that the
    others still run. Each benchmark's rows are also printed as soon as they are known."""
    try:
        rows: list[Row] = importlib.import_module(BENCHMARKS[name]).run(ctx)
    except Exception as exc:
        traceback.print_exc()
        rows = [Row(name, "—", skipped=f"error: {type(exc).__name__}: {exc}".replace("\n", " ")[:300])]
    print(markdown_table(rows), flush=True)
    return rows


def _run_in_child(name: str, ctx: Context, threads: int | None) -> list[Row]:
    if threads:
        import torch

        torch.set_num_threads(threads)
    logging.getLogger("lightning").setLevel(logging.ERROR)
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="lightning")
    with contextlib.redirect_stdout(sys.stderr):  # progress bars and logs; stdout gets the table alone
        return run_one(name, ctx)


def run_isolated(name: str, ctx: Context, threads: int | None) -> list[Row]:
    """:func:`run_one` in a fresh interpreter, so that a benchmark's figures do not depend on what
    the benchmarks before it left in the process. In one process, LapPE's precompute took 12.18 s
    after the ``reference`` rows (whose runs leave a multi-GiB heap behind) and 9.77 s in an
    ``--only pe`` run, against PyG's 81.6 and 82.6 s (2026-12-02, at f76628a and 4847b23)."""
    spawn = multiprocessing.get_context("spawn")
    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
            return pool.submit(_run_in_child, name, ctx, threads).result()
    except BrokenProcessPool as exc:
        return [Row(name, "—", skipped=f"error: its process died ({exc})")]


#: environment variables that change what a benchmark measures: part of a run's command line
COMMAND_ENV: tuple[str, ...] = ("GRAPHBENCH_BENCH_SAMPLERS", "GRAPHBENCH_BENCH_OVERHEAD")


def command_line(argv: Sequence[str]) -> str:
    """The command as a user would type it again, with the environment variables that shaped the run."""
    env = [f"{name}={os.environ[name]}" for name in COMMAND_ENV if os.environ.get(name)]
    return " ".join([*env, "python -m benchmarks", *argv])


def record_paths(args: argparse.Namespace) -> tuple[Path | None, Path | None]:
    """Where to store the run's rows and render the page: the defaults for a full run, only what
    ``--results`` / ``--docs`` name for a quick one."""
    if args.quick:
        return args.results, args.docs
    return args.results or RESULTS_PATH, args.docs or DOCS_PATH


def render(results: Path, docs: Path) -> None:
    runs = load_runs(results)
    if not runs:
        raise SystemExit(f"error: {results} holds no benchmark results; run python -m benchmarks first")
    docs.write_text(render_page(runs, list(BENCHMARKS), PROFILE_PATH.read_text() if PROFILE_PATH.exists() else ""))
    print(f"[benchmarks] wrote {docs} from {results}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    results_path, docs_path = record_paths(args)
    if args.render:
        render(results_path or RESULTS_PATH, docs_path or DOCS_PATH)
        return 0
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(args.threads)
        import torch

        torch.set_num_threads(args.threads)  # the stamp below reports it; each benchmark's process sets its own
    work_dir = Path(tempfile.mkdtemp(prefix="graphbench-bench-"))
    ctx = Context(
        data_dir=args.data_dir.resolve(),
        cache_dir=(args.cache_dir or work_dir / "cache").resolve(),
        work_dir=work_dir,
        quick=args.quick,
        repeats=args.repeats or (1 if args.quick else 3),
    )
    rows: list[Row] = []
    try:
        for name in args.only.split(","):
            print(f"[benchmarks] running {name} ...", file=sys.stderr, flush=True)
            rows += run_isolated(name, ctx, args.threads)
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    table = markdown_table(rows)
    import torch

    machine = (
        f"{cpu_model() or 'unknown CPU'}: {os.cpu_count()} CPU cores, "
        f"{torch.get_num_threads()} torch threads, load average {os.getloadavg()[0]:.1f} at the end"
    )
    run = BenchRun(command_line(argv), dt.date.today().isoformat(), code_version().short, machine, rows)
    stamp = f"`{run.command}` on {run.date} at {run.commit}, {machine}"
    print(table)
    print(f"\n{stamp}")
    if args.output:
        args.output.write_text(f"{table}\n\n{stamp}\n")
    if results_path is not None:
        save_runs(results_path, merged(load_runs(results_path), run))
        print(f"[benchmarks] stored the rows in {results_path}", file=sys.stderr)
        if docs_path is not None:
            render(results_path, docs_path)
    return 0
