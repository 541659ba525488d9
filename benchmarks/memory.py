"""Memory: peak RSS of a Peptides-func training run at the recipe's batch size, and the RSS after
every epoch (growth per epoch). Runs ``python run.py`` in a fresh process, so that nothing else
this runner did counts."""

from __future__ import annotations

import ctypes
import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import lightning as L
import numpy as np

from benchmarks.common import QUICK_CYCLES, REPO, Context, Row, Target, compose_config
from benchmarks.peptides import RAW
from graphbench.build.data import build_datamodule
from graphbench.callbacks.resources import peak_rss_mb

GROWTH = Target("<=", 1.0, " MiB/epoch")


def rss_mb() -> float:
    """Current resident set size of this process in MiB."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:  # not Linux
        import psutil

        return psutil.Process().memory_info().rss / 2**20


def release_freed_memory() -> None:
    """Collect garbage and hand the allocator's free pages back to the OS (glibc ``malloc_trim``),
    so that RSS tracks live memory instead of the allocator's high-water mark."""
    gc.collect()
    if sys.platform.startswith("linux"):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


class RSSRecorder(L.Callback):
    """RSS after every training epoch (validation included), once freed memory is released, and the
    peak RSS; JSON to ``output``."""

    def __init__(self, output: str) -> None:
        self.output = Path(output)
        self.rss: list[float] = []

    def on_validation_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if not trainer.sanity_checking:
            release_freed_memory()
            self.rss.append(rss_mb())

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.output.write_text(json.dumps({"rss_mb": self.rss, "peak_mb": peak_rss_mb()}))


def recipe(ctx: Context) -> tuple[str, list[str], int]:
    if ctx.quick:
        return "cycles recipe (quick)", QUICK_CYCLES, 3
    return "dataset=peptides-func model=gcn, batch 128", ["dataset=peptides-func", "model=gcn"], 8


def run(ctx: Context) -> list[Row]:
    case, overrides, epochs = recipe(ctx)
    peak = Row("memory: peak RSS of training", case)
    growth = Row("memory: RSS growth per epoch", case, target=GROWTH)
    if not ctx.quick and not ctx.has_raw(RAW):
        peak.skipped = growth.skipped = f"no raw files at {ctx.data_dir / RAW}"
        return [peak, growth]
    run_dir = ctx.work_dir / "memory"
    output = run_dir / "rss.json"
    build_datamodule(compose_config(ctx, overrides, run_dir)).prepare_data()  # the cache: training alone is measured
    command = [
        sys.executable,
        "run.py",
        *overrides,
        f"trainer.max_epochs={epochs}",
        f"paths.data_dir={ctx.data_dir}",
        f"paths.cache_dir={ctx.cache_dir}",
        f"hydra.run.dir={run_dir}",
        f"+callbacks.rss._target_={RSSRecorder.__module__}.{RSSRecorder.__qualname__}",
        f"+callbacks.rss.output={output}",
    ]
    done = subprocess.run(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    record = json.loads(output.read_text())
    rss = record["rss_mb"]
    later = rss[1:] if len(rss) > 2 else rss  # after the first epoch (warm-up)
    slope = float(np.polyfit(np.arange(len(later)), later, 1)[0]) if len(later) > 1 else 0.0
    peak.graphbench = f"{record['peak_mb']:.0f} MiB"
    peak.note = "python run.py in a fresh process with the processed dataset cached, VmHWM"
    growth.graphbench = " → ".join(f"{v:.0f}" for v in rss) + " MiB"
    growth.figure = slope
    growth.note = (
        f"least-squares slope of the RSS after epochs 1..{len(rss) - 1}, each read after gc and malloc_trim "
        "(live memory, not the allocator's high-water mark)"
    )
    return [peak, growth]
