"""Input pipeline: the share of training-step time spent waiting for data in the default recipe
(``dataset=peptides-func model=gcn``), measured inside ``graphbench.tasks.train.train`` by a callback."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import lightning as L

from benchmarks.common import QUICK_CYCLES, Context, Row, Target, compose_config
from benchmarks.peptides import RAW
from graphbench.tasks.train import train

TARGET = Target("<", 10.0, "%")


class DataWaitClock(L.Callback):
    """Per training step: the wait for its batch (from the end of the previous step, or the start of
    the epoch, to ``on_train_batch_start``: fetching and collating it, moving it to the device) and
    the step itself (``on_train_batch_start`` to ``on_train_batch_end``). Written to ``output`` as JSON."""

    def __init__(self, output: str) -> None:
        self.output = Path(output)
        self.wait_s: list[float] = []
        self.step_s: list[float] = []
        self._mark = 0.0

    def on_train_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._mark = time.perf_counter()

    def on_train_batch_start(self, trainer: L.Trainer, pl_module: L.LightningModule, *args: Any) -> None:
        now = time.perf_counter()
        self.wait_s.append(now - self._mark)
        self._mark = now

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *args: Any) -> None:
        now = time.perf_counter()
        self.step_s.append(now - self._mark)
        self._mark = now

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.output.write_text(json.dumps({"wait_s": self.wait_s, "step_s": self.step_s}))


def recipe(ctx: Context) -> tuple[str, list[str], int]:
    if ctx.quick:
        return "cycles recipe (quick)", QUICK_CYCLES, 2
    return "dataset=peptides-func model=gcn (batch 128, num_workers 0)", ["dataset=peptides-func", "model=gcn"], 2


def run(ctx: Context) -> list[Row]:
    case, overrides, epochs = recipe(ctx)
    row = Row("pipeline: data wait / step time", case, target=TARGET)
    if not ctx.quick and not ctx.has_raw(RAW):
        row.skipped = f"no raw files at {ctx.data_dir / RAW}"
        return [row]
    shares, waits, steps = [], [], []
    for r in range(ctx.repeats):
        run_dir = ctx.work_dir / "pipeline" / str(r)
        output = run_dir / "data_wait.json"
        clock = f"+callbacks.data_wait._target_={DataWaitClock.__module__}.{DataWaitClock.__qualname__}"
        train(
            compose_config(
                ctx, [*overrides, f"trainer.max_epochs={epochs}", clock, f"+callbacks.data_wait.output={output}"], run_dir
            )
        )
        record = json.loads(output.read_text())
        wait, step = sum(record["wait_s"]), sum(record["step_s"])
        shares.append(100 * wait / (wait + step))
        waits.append(1000 * wait / len(record["wait_s"]))
        steps.append(1000 * (wait + step) / len(record["step_s"]))
    best = sorted(range(len(shares)), key=shares.__getitem__)[len(shares) // 2]  # the median run
    row.graphbench = f"{waits[best]:.1f} ms waiting of {steps[best]:.1f} ms per step"
    row.figure = shares[best]
    row.note = f"median run of {ctx.repeats}, epochs per run: {epochs} (all shares: {', '.join(f'{s:.1f}%' for s in shares)})"
    return [row]
