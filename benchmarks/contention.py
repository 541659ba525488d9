"""Training beside other busy processes: graphbench's thread choice against one thread and against torch's default.

torch's OpenMP threads spin at the end of every parallel region by default; when one of them has lost its
core to another process, the others burn theirs waiting for it (:mod:`graphbench.run.threads`). Each case
is a real ``python run.py`` run in a fresh process, its ``time_per_epoch_s`` read from ``results.json``,
for three contenders:

* ``graphbench``: the run as a user starts it (``threads=auto``, ``OMP_WAIT_POLICY=PASSIVE`` set by graphbench);
* ``one thread``: ``threads=1``;
* ``torch default``: every usable CPU (``threads=<usable>``) with torch's default waiting, threads spinning
  300,000 rounds before they sleep (``OMP_WAIT_POLICY=ACTIVE GOMP_SPINCOUNT=300000``, which is what the
  runtime does when the variable is unset),

each on the idle machine and beside one busy process per usable core but one (a Python loop spinning),
in interleaved rounds; the figures are medians of per-round ratios. Targets: under contention graphbench
takes at most 1.25x its idle time; idle, at most 1.05x torch's default.

The ``machine floor`` row measures what the same busy processes cost a one-thread Python loop, which
shares no thread and no memory with them: 1.0 where every usable CPU is a core of its own, more where
two CPUs share a physical core or the host shares them. A run's busy / idle ratio cannot go under it;
each busy row also gives its ratio over the floor.

What bounds the two figures. Beside the busy processes a run has one core's worth of CPU left, so no
thread setting beats one thread there by more than the interference of the others (each busy row names
its fastest contender). Where a second core pays at idle, by a factor ``s``, busy / idle is therefore
about ``s`` times the floor or more: over 1.25 wherever the second thread gains more than
``1.25 / floor``. Idle, torch's default wins small parallel regions because its threads spin instead
of sleeping; the same spinning is what collapses beside a busy process (the idle row gives torch
default's own busy / idle). A thread count or wait policy chosen from the machine's load at run time
could take the better side of both, but the thread count decides how reductions are split, and so a
run's float sums: the same command would give other numbers on a busy and on an idle machine
(``tests/e2e/test_reference_numbers.py`` records how far one thread against two moves a run).
graphbench chooses from the config, the step's size and the CPUs the process may use, never from the
load.

The ``crossover`` rows measure where a second thread starts to pay, which sets
:data:`graphbench.run.threads.PARALLEL_WORK`: a training step (forward, backward, Adam) of a 3-layer
GCN of width 64 on a random graph of 8 edges a node, on one thread against every usable CPU, idle,
at growing node counts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from benchmarks.common import REPO, Context, Row, Target, interleaved, median, paired_ratio, slug
from graphbench.run.threads import PARALLEL_WORK, cpu_allowance

BUSY_TARGET = Target("<=", 1.25)
IDLE_TARGET = Target("<=", 1.05)


@dataclass(frozen=True)
class Case:
    name: str
    overrides: tuple[str, ...]
    raw: str | None = None  # the raw-data folder it needs under the data root


def cases(quick: bool) -> list[Case]:
    if quick:
        return [
            Case(
                "default experiment (quick)",
                ("trainer.max_epochs=1", "dataset.num_train=64", "dataset.num_val=32", "dataset.num_test=32"),
            )
        ]
    return [
        Case("default experiment: python run.py trainer.max_epochs=2", ("trainer.max_epochs=2",)),
        Case(
            "Peptides-func GCN (LRGB-tuned), 10 batches an epoch",
            (
                "experiment=lrgb-tuned/peptides-func-gcn",
                "trainer.max_epochs=2",
                "++trainer.limit_train_batches=10",
                "++trainer.limit_val_batches=2",
                "++trainer.limit_test_batches=1",
            ),
            raw="peptides-functional",
        ),
        Case("Cora GCN (Kipf & Welling), 20 epochs", ("dataset=cora", "model=gcn", "trainer.max_epochs=20"), raw="Planetoid"),
        Case(
            "sbm-large full batch (100,000 nodes), 2 epochs",
            ("experiment=samplers/sbm-large", "sampler=full", "trainer.max_epochs=2"),
        ),
    ]


#: contender -> (environment added to the run's, overrides added to the run's)
def contenders(usable: int) -> dict[str, tuple[dict[str, str], tuple[str, ...]]]:
    return {
        "graphbench": ({}, ()),
        "one thread": ({}, ("threads=1",)),
        "torch default": ({"OMP_WAIT_POLICY": "ACTIVE", "GOMP_SPINCOUNT": "300000"}, (f"threads={usable}",)),
    }


def run_env(extra: dict[str, str]) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "MKL_NUM_THREADS", "GOMP_SPINCOUNT")
    }
    env.pop("GRAPHBENCH_SET_OMP_WAIT_POLICY", None)
    return {**env, "WANDB_MODE": "disabled", **extra}


def epoch_time(ctx: Context, case: Case, env: dict[str, str], overrides: Sequence[str], tag: str) -> float:
    """Seconds per epoch of one fresh ``python run.py`` run (its ``time_per_epoch_s``)."""
    run_dir = ctx.work_dir / "contention" / f"{slug(case.name)[:40]}-{slug(tag)}-{time.monotonic_ns()}"
    argv = [
        sys.executable,
        "run.py",
        *case.overrides,
        *overrides,
        f"paths.data_dir={ctx.data_dir}",
        f"paths.cache_dir={ctx.cache_dir}",
        f"hydra.run.dir={run_dir}",
        "logger=none",
        "trainer.enable_progress_bar=false",
    ]
    done = subprocess.run(argv, cwd=REPO, env=run_env(env), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[1:])} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return float(json.loads((run_dir / "results.json").read_text())["time_per_epoch_s"])


@contextmanager
def busy(processes: int) -> Iterator[None]:
    """``processes`` other processes, each keeping a core busy, for the length of the block."""
    started = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        time.sleep(0.5)
        yield
    finally:
        for process in started:
            process.kill()
            process.wait()


def python_loop_time(additions: int = 3_000_000) -> float:
    """Seconds of a one-thread Python loop of ``additions`` integer additions: no torch, no OpenMP."""
    start, total = time.perf_counter(), 0
    for i in range(additions):
        total += i
    return time.perf_counter() - start


def floor_row(ctx: Context, usable: int) -> tuple[Row, float]:
    """The machine's floor: what the same busy processes cost a single thread that shares nothing with
    them (a Python loop), and that ratio. On hardware where every usable CPU is a core of its own the
    floor is 1.0; where two CPUs are hyperthreads of one core, or the host shares them, it is higher,
    and no thread setting of a run can go under it."""
    others = max(1, usable - 1)

    def beside_busy() -> float:
        with busy(others):
            return python_loop_time()

    times = interleaved({"idle": python_loop_time, "busy": beside_busy}, max(ctx.repeats, 5))
    ratio = paired_ratio(times["busy"], times["idle"])
    row = Row(
        "contention: machine floor",
        "a one-thread Python loop (3,000,000 additions)",
        graphbench=f"{median(times['busy']) * 1e3:.0f} ms busy",
        reference=f"{median(times['idle']) * 1e3:.0f} ms idle",
        figure=ratio,
        note=f"busy / idle beside {others} busy process(es): what they cost a single thread that shares "
        "nothing with them on this machine (1.0 where each CPU is a core of its own)",
    )
    return row, ratio


def case_rows(ctx: Context, case: Case, usable: int, floor: float = 1.0) -> list[Row]:
    if case.raw is not None and not ctx.has_raw(case.raw):
        return [Row("contention", case.name, skipped=f"raw files not found under {ctx.data_dir / case.raw}")]
    others = max(1, usable - 1)
    epoch_time(ctx, case, {}, ("trainer.max_epochs=1",), "warm-cache")  # builds the dataset's cache once
    runs = {
        f"{name} {load}": (lambda env=env, extra=extra, load=load, name=name: _timed(ctx, case, env, extra, load, others, name))
        for name, (env, extra) in contenders(usable).items()
        for load in ("idle", "busy")
    }
    times = interleaved(runs, ctx.repeats)
    fmt = {key: f"{median(values):.3g} s" for key, values in times.items()}
    busy_ratio = paired_ratio(times["graphbench busy"], times["graphbench idle"])
    idle_ratio = paired_ratio(times["graphbench idle"], times["torch default idle"])
    best_busy = min(contenders(usable), key=lambda name: median(times[f"{name} busy"]))
    best_busy_ratio = paired_ratio(times[f"{best_busy} busy"], times["graphbench idle"])
    return [
        Row(
            "contention: busy / idle",
            case.name,
            graphbench=f"{fmt['graphbench busy']} busy, {fmt['graphbench idle']} idle",
            reference=f"torch default {fmt['torch default busy']} busy; one thread {fmt['one thread busy']} busy",
            figure=busy_ratio,
            target=BUSY_TARGET,
            note=f"s per epoch beside {others} busy process(es); {busy_ratio / floor:.2f}x over the machine floor "
            f"({floor:.2f}x); torch default busy / graphbench idle "
            f"{paired_ratio(times['torch default busy'], times['graphbench idle']):.2f}x; the fastest contender "
            f"busy ({best_busy}) / graphbench idle {best_busy_ratio:.2f}x",
        ),
        Row(
            "contention: idle",
            case.name,
            graphbench=fmt["graphbench idle"],
            reference=f"torch default {fmt['torch default idle']}; one thread {fmt['one thread idle']}",
            figure=idle_ratio,
            target=IDLE_TARGET,
            note="s per epoch on the idle machine, graphbench / torch default; torch default busy / idle "
            f"{paired_ratio(times['torch default busy'], times['torch default idle']):.2f}x",
        ),
    ]


def _timed(ctx: Context, case: Case, env: dict[str, str], extra: tuple[str, ...], load: str, others: int, name: str) -> float:
    if load == "idle":
        return epoch_time(ctx, case, env, extra, f"{name}-{load}")
    with busy(others):
        return epoch_time(ctx, case, env, extra, f"{name}-{load}")


def gcn_step_time(nodes: int, threads: int, steps: int, width: int = 64) -> float:
    """Median seconds of a training step of a 3-layer GCN of ``width`` on a random graph of ``nodes``
    nodes and 8 edges a node, on ``threads`` threads."""
    from torch_geometric.nn import GCNConv

    generator = torch.Generator().manual_seed(0)
    edge_index = torch.randint(0, nodes, (2, 8 * nodes), generator=generator)
    x = torch.randn(nodes, width, generator=generator)
    layers = torch.nn.ModuleList([GCNConv(width, width) for _ in range(3)])
    optimizer = torch.optim.Adam(layers.parameters())
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        times = []
        for step in range(steps + 1):
            start = time.perf_counter()
            h = x
            for layer in layers:
                h = torch.relu(layer(h, edge_index))
            h.square().mean().backward()
            optimizer.step()
            optimizer.zero_grad()
            if step:  # the first step allocates
                times.append(time.perf_counter() - start)
        return median(times)
    finally:
        torch.set_num_threads(before)


def crossover_rows(ctx: Context, usable: int) -> list[Row]:
    if usable < 2:
        return [Row("contention: crossover", "—", skipped="one usable CPU: no second thread to measure")]
    sizes = (500, 4000) if ctx.quick else (2000, 4000, 6000, 8000, 16000, 64000)
    steps = 2 if ctx.quick else 10
    rows = []
    for nodes in sizes:
        times = interleaved(
            {"one": lambda n=nodes: gcn_step_time(n, 1, steps), "all": lambda n=nodes: gcn_step_time(n, usable, steps)},
            ctx.repeats,
        )
        ratio = paired_ratio(times["all"], times["one"])
        side = "under" if nodes * 64 < PARALLEL_WORK else "from"
        rows.append(
            Row(
                "contention: crossover",
                f"GCN step, {nodes:,} nodes x 64 channels = {nodes * 64:,}",
                graphbench=f"{usable} threads {median(times['all']) * 1e3:.1f} ms",
                reference=f"1 thread {median(times['one']) * 1e3:.1f} ms",
                figure=ratio,
                note=f"{usable} threads / 1 thread, idle; auto picks {'1' if side == 'under' else usable} ({side} PARALLEL_WORK = {PARALLEL_WORK:,})",
            )
        )
    return rows


def run(ctx: Context, selected: Sequence[Case] | None = None) -> list[Row]:
    usable = cpu_allowance().usable
    floor, floor_ratio = floor_row(ctx, usable)
    rows = [floor, *crossover_rows(ctx, usable)]
    for case in selected if selected is not None else cases(ctx.quick):
        rows += case_rows(ctx, case, usable, floor_ratio)
    return rows
