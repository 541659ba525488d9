"""Where the time of one eager training step goes: the ``dispatch`` group's step (the LRGB-tuned
recipe on four tiny molecules, one torch thread) under :mod:`cProfile`, for graphbench's network and
for the plain-PyG reference, as a markdown table of the ``top`` functions by their own time
(``tottime``: time in the function itself, callees excluded), per step.

    python -m benchmarks.profile_step [--recipe gcn,gine,gatedgcn] [--contenders eager,reference] [--steps 200] [--top 10] [--output benchmarks/profile.md]

Each recipe's section opens with a table of the step's phases (forward with the loss, backward,
clipping with the optimizer's step), median microseconds per step of every contender, unprofiled,
the contenders' steps interleaved one by one.

``--output`` stores the tables as a section of ``docs/performance.md``, which the benchmark runner
renders after its own tables (:data:`benchmarks.report.PROFILE_PATH`).

The step is :func:`benchmarks.dispatch.train_steps` (``zero_grad``, forward, BCE with logits,
backward, clipping, the optimizer's step); the contenders are those of
:func:`benchmarks.dispatch.contenders`. Built-in functions that run operators (``torch._C`` calls,
``Tensor`` methods) count as their own rows, so a row of Python code is the interpreter's time
around the operators. Times under a profiler are inflated by its per-call cost; the ranking, not
the absolute figure, is what the table tells.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import torch

from benchmarks.common import REPO, Context
from benchmarks.dispatch import CONTENDERS, LABELS, Contenders, contenders, train_steps
from benchmarks.reference import RECIPES, Recipe
from graphbench.data.store.padding import real_graphs
from graphbench.run.provenance import code_version, cpu_model

#: contenders profiled, as :func:`benchmarks.dispatch.contenders` names them
PROFILED: tuple[str, ...] = ("eager", "reference")
#: untimed steps before the profiled ones
WARMUP_STEPS = 5


def location(key: tuple[str, int, str]) -> str:
    """``path:line(function)`` with the path relative to the repository or to ``site-packages``."""
    filename, line, function = key
    if filename == "~":
        return function  # a built-in: {method 'index_select' of 'torch._C.TensorBase' objects}
    path = filename.replace(str(REPO) + "/", "")
    if "site-packages/" in path:
        path = path.split("site-packages/", 1)[1]
    return f"{path}:{line}({function})"


def phase_times(setup: Contenders, names: Sequence[str], steps: int) -> dict[str, dict[str, float]]:
    """Median seconds per step of each phase of the training step of :func:`benchmarks.dispatch.train_steps`
    (``forward``: zero_grad, forward and loss; ``backward``; ``step``: clipping and the optimizer's step)
    for each contender of ``names``, their steps interleaved one by one after :data:`WARMUP_STEPS` untimed."""
    phases: dict[str, dict[str, list[float]]] = {name: {"forward": [], "backward": [], "step": []} for name in names}
    for name in names:
        train_steps(setup.models[name], setup.optimizers[name], setup.batches[name], WARMUP_STEPS)
    for _ in range(steps):
        for name in names:
            model, optimizer, batch = setup.models[name], setup.optimizers[name], setup.batches[name]
            model.train()
            start = time.perf_counter()
            optimizer.zero_grad()
            loss = torch.nn.functional.binary_cross_entropy_with_logits(real_graphs(model(batch), batch), batch.y)
            forward = time.perf_counter()
            loss.backward()
            backward = time.perf_counter()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            end = time.perf_counter()
            phases[name]["forward"].append(forward - start)
            phases[name]["backward"].append(backward - forward)
            phases[name]["step"].append(end - backward)
    return {name: {phase: statistics.median(times) for phase, times in by.items()} for name, by in phases.items()}


def phase_table(recipe: Recipe, setup: Contenders, names: Sequence[str], steps: int) -> str:
    """The phases of :func:`phase_times` as a markdown table, one row per contender."""
    times = phase_times(setup, names, steps)
    lines = [
        f"**{recipe.label}, the step's phases** (median µs per step over {steps} interleaved steps, unprofiled)",
        "",
        "| contender | forward + loss | backward | clip + optimizer step | total |",
        "|---|---|---|---|---|",
    ]
    for name in names:
        by = times[name]
        lines.append(
            f"| {LABELS[name]} | {1e6 * by['forward']:,.0f} | {1e6 * by['backward']:,.0f} | {1e6 * by['step']:,.0f} "
            f"| {1e6 * sum(by.values()):,.0f} |"
        )
    return "\n".join(lines)


def profile_table(recipe: Recipe, name: str, steps: int, top: int, ctx: Context, setup: Contenders | None = None) -> str:
    """The ``top`` rows by own time of ``steps`` training steps of contender ``name`` of ``recipe``."""
    setup = setup or contenders(ctx, recipe)
    model, optimizer = setup.models[name], setup.optimizers[name]
    batch = setup.batches[name]
    train_steps(model, optimizer, batch, WARMUP_STEPS)  # caches, lazy initialization
    profiler = cProfile.Profile()
    profiler.enable()
    train_steps(model, optimizer, batch, steps)
    profiler.disable()
    stats = pstats.Stats(profiler)
    entries = stats.stats  # type: ignore[attr-defined]
    total = sum(tottime for _, _, tottime, _, _ in entries.values())
    calls = sum(ncalls for _, ncalls, _, _, _ in entries.values())
    ranked = sorted(entries.items(), key=lambda item: item[1][2], reverse=True)[:top]
    lines = [
        f"**{recipe.label}, {name}**: {1e6 * total / steps:,.0f} µs of profiled time per step, "
        f"{calls / steps:,.0f} Python-level calls per step",
        "",
        "| function | calls / step | own µs / step | share |",
        "|---|---|---|---|",
    ]
    for key, (_, ncalls, tottime, _, _) in ranked:
        lines.append(f"| `{location(key)}` | {ncalls / steps:g} | {1e6 * tottime / steps:,.1f} | {100 * tottime / total:.1f}% |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile_step", description=__doc__)
    parser.add_argument("--recipe", default=",".join(r.name for r in RECIPES), help="comma-separated recipes")
    parser.add_argument("--contenders", default=",".join(PROFILED), help=f"comma-separated contenders out of {list(CONTENDERS)}")
    parser.add_argument("--steps", type=int, default=200, help="profiled training steps per contender")
    parser.add_argument("--top", type=int, default=10, help="rows per table")
    parser.add_argument("--output", type=Path, default=None, help="also store the tables as docs/performance.md's last section")
    args = parser.parse_args(argv)
    names = args.contenders.split(",")
    unknown = sorted(set(names) - set(CONTENDERS))
    if unknown:
        parser.error(f"unknown contender(s) {unknown}; valid: {list(CONTENDERS)}")
    torch.set_num_threads(1)
    work_dir = Path(tempfile.mkdtemp(prefix="graphbench-profile-"))
    ctx = Context(data_dir=work_dir / "data", cache_dir=work_dir / "cache", work_dir=work_dir)
    chosen = args.recipe.split(",")
    tables = []
    for recipe in (r for r in RECIPES if r.name in chosen):
        setup = contenders(ctx, recipe)
        tables.append(phase_table(recipe, setup, names, args.steps))
        print(tables[-1], end="\n\n", flush=True)
        for name in names:
            tables.append(profile_table(recipe, name, args.steps, args.top, ctx, setup))
            print(tables[-1], end="\n\n", flush=True)
    shutil.rmtree(work_dir, ignore_errors=True)
    if args.output is not None:
        args.output.write_text(section(tables, argv if argv is not None else sys.argv[1:], args.steps, args.top))
    return 0


def section(tables: Sequence[str], argv: Sequence[str], steps: int, top: int) -> str:
    """The tables under a heading, the command that made them, and when and where it ran."""
    machine = f"{cpu_model() or 'unknown CPU'}: {os.cpu_count()} CPU cores, 1 torch thread"
    lines = [
        "## Where a training step's time goes",
        "",
        f"    {' '.join(['python -m benchmarks.profile_step', *argv])}",
        "",
        f"on {dt.date.today().isoformat()} at commit {code_version().short}, {machine}: the `dispatch` group's "
        f"training step under cProfile, {steps} steps per contender after {WARMUP_STEPS} untimed, the top {top} "
        "functions by own time (callees excluded). Built-in rows (`torch._C` calls, `Tensor` methods) are the "
        "operators with their dispatch; rows of Python code are the interpreter's time around them. The profiler "
        "adds a cost to every Python call, so its total exceeds the step's unprofiled time; the ranking is what it tells.",
    ]
    for table in tables:
        lines += ["", table]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
