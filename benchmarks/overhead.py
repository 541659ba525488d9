"""Framework overhead: time per training epoch of graphbench's ``train(cfg)`` (Lightning, callbacks,
logger, progress bar and all) against a hand-written PyG loop that trains the identical network
(``network_builder(cfg, info)`` at the same seed) with the same optimizer and loss on the same
batches, and validates after every epoch as graphbench does. Both time an epoch from its start to
the end of its last step, as ``results.json``'s ``time_per_epoch_s`` does (validation falls outside
that span on both sides), and leave out the first epoch of a run (warm-up)."""

from __future__ import annotations

import json
import math
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lightning as L
import torch
from torch_geometric.data import Batch

from benchmarks.common import QUICK_CYCLES, Context, Row, Target, compose_config, fmt_s, interleaved, median, paired_ratio, slug
from graphbench.instantiate import METADATA_KEYS, build
from graphbench.modules.network import count_parameters
from graphbench.train import build_datamodule, network_builder, train

TARGET = Target("<=", 1.05)


@dataclass(frozen=True)
class Workload:
    case: str
    overrides: list[str]
    epochs: int
    raw: str  # raw files it needs under the data root ("" = generated)


def workloads(quick: bool) -> list[Workload]:
    if quick:
        return [
            Workload("GCN, cycles (quick)", [*QUICK_CYCLES, "model=gcn"], 1, ""),
            Workload("GatedGCN, cycles (quick)", [*QUICK_CYCLES, "model=gatedgcn"], 1, ""),
            Workload("GCN full-batch, Cora (quick)", ["dataset=cora", "model=gcn"], 2, "Planetoid/Cora"),
        ]
    return [
        Workload("GCN, Peptides-func", ["dataset=peptides-func", "model=gcn"], 3, "peptides-functional"),
        Workload("GatedGCN, Peptides-func", ["dataset=peptides-func", "model=gatedgcn"], 2, "peptides-functional"),
        Workload("GCN full-batch, Cora", ["dataset=cora", "model=gcn"], 100, "Planetoid/Cora"),
    ]


class EpochClock(L.Callback):
    """Wall and process-CPU seconds of every training epoch, over the span ``ResourceTracker``
    times (epoch start to the end of its last step); JSON to ``output`` when training ends."""

    def __init__(self, output: str) -> None:
        self.output = Path(output)
        self.wall_s: list[float] = []
        self.cpu_s: list[float] = []
        self._start = self._last = (0.0, 0.0)

    def on_train_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._start = self._last = (time.perf_counter(), time.process_time())

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *args: Any) -> None:
        self._last = (time.perf_counter(), time.process_time())

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.wall_s.append(self._last[0] - self._start[0])
        self.cpu_s.append(self._last[1] - self._start[1])

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.output.write_text(json.dumps({"wall_s": self.wall_s, "cpu_s": self.cpu_s}))


@dataclass(frozen=True)
class Measured:
    wall_s: float  # mean wall seconds per training epoch, the first left out when there are more
    cpu_s: float  # the same in process CPU seconds
    params: int

    @classmethod
    def of(cls, wall_s: list[float], cpu_s: list[float], params: int) -> Measured:
        """Steady state: the first epoch (allocator and cache warm-up) counts only if it is the only one."""
        skip = 1 if len(wall_s) > 1 else 0
        return cls(statistics.fmean(wall_s[skip:]), statistics.fmean(cpu_s[skip:]), params)


def graphbench_epoch(ctx: Context, work: Workload, run_dir: Path) -> Measured:
    """A full ``graphbench.train.train`` run, timed per epoch by :class:`EpochClock`."""
    clock = run_dir / "epoch_clock.json"
    overrides = [
        *work.overrides,
        f"trainer.max_epochs={work.epochs}",
        f"+callbacks.epoch_clock._target_={EpochClock.__module__}.{EpochClock.__qualname__}",
        f"+callbacks.epoch_clock.output={clock}",
    ]
    results = train(compose_config(ctx, overrides, run_dir))
    times = json.loads(clock.read_text())
    return Measured.of(times["wall_s"], times["cpu_s"], int(results.num_params))


def hand_written_epoch(ctx: Context, work: Workload, run_dir: Path) -> Measured:
    """The same network, optimizer, loss and batches in a plain PyTorch loop: over graphbench's
    DataLoader for graph-level tasks (so the reference gets graphbench's bulk batching too and the
    figure isolates the framework), over the one graph for full-batch node classification.

    Like graphbench (and PyG's own examples), the loop evaluates the validation split after every
    training epoch, outside the timed span: what runs between two epochs leaves its mark on the
    caches and thread pool the next epoch starts with, so a loop that never validated would not be
    the experiment graphbench runs."""
    cfg = compose_config(ctx, work.overrides, run_dir)
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    datamodule = build_datamodule(cfg)
    datamodule.prepare_data()
    datamodule.setup("fit")
    info = datamodule.info
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    model = network_builder(cfg, info)(int(cfg.model.hidden_dim))
    optimizer = build(cfg.optimizer, "optimizer", METADATA_KEYS)(model.parameters())
    loss_fn = build(cfg.dataset.module.loss, "dataset.module.loss")  # the dataset's own loss, as train() uses it
    if info.level == "node":  # full batch: the graph, collated once, as a hand-written Cora script holds it
        graph = Batch.from_data_list([datamodule.graph])
        loaders: dict[str, Iterable[Batch]] = {"train": [graph], "val": [graph]}
    else:
        loaders = {"train": datamodule.train_dataloader(), "val": datamodule.val_dataloader()}

    def loss_of(batch: Batch, split: str) -> torch.Tensor:
        out, y = model(batch), batch.y
        if info.level == "node":
            mask = batch[f"{split}_mask"]
            out, y = out[mask], y[mask]
        return loss_fn(out, y.long().view(-1) if info.task_type == "multiclass" else y.float().view(out.shape))

    wall, cpu = [], []
    for _ in range(work.epochs):
        model.train()
        start, cpu_start = time.perf_counter(), time.process_time()
        for batch in loaders["train"]:
            optimizer.zero_grad()
            loss_of(batch, "train").backward()
            optimizer.step()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - cpu_start)
        model.eval()
        with torch.inference_mode():
            val_loss = sum(float(loss_of(batch, "val")) for batch in loaders["val"])
        if not math.isfinite(val_loss):
            raise AssertionError(f"{work.case}: the hand-written loop's validation loss is {val_loss}")
    return Measured.of(wall, cpu, count_parameters(model))


def run(ctx: Context) -> list[Row]:
    rows = []
    for work in workloads(ctx.quick):
        row = Row("overhead: time / training epoch", work.case, target=TARGET)
        if work.raw and not ctx.has_raw(work.raw):
            row.skipped = f"no raw files at {ctx.data_dir / work.raw}"
            rows.append(row)
            continue
        runs: dict[str, list[Measured]] = {"graphbench": [], "hand": []}

        def contender(name: str, fn: Callable[[Context, Workload, Path], Measured]) -> Callable[[], float]:
            def call() -> float:
                run_dir = ctx.work_dir / "overhead" / slug(work.case) / f"{name}-{len(runs[name])}"
                runs[name].append(fn(ctx, work, run_dir))
                return runs[name][-1].wall_s

            return call

        wall = interleaved(
            {"graphbench": contender("graphbench", graphbench_epoch), "hand": contender("hand", hand_written_epoch)}, ctx.repeats
        )
        params = {m.params for ms in runs.values() for m in ms}
        if len(params) != 1:
            raise AssertionError(f"{work.case}: the two contenders built different models ({params} parameters)")
        cpu_ratio = paired_ratio([m.cpu_s for m in runs["graphbench"]], [m.cpu_s for m in runs["hand"]])
        row.graphbench = fmt_s(median(wall["graphbench"]))
        row.reference = fmt_s(median(wall["hand"])) + " (hand-written loop)"
        row.figure = paired_ratio(wall["graphbench"], wall["hand"])
        row.note = (
            f"epochs per run: {work.epochs} (the first, warm-up, left out), interleaved runs: {ctx.repeats}, {params.pop():,} params; "
            f"figure: median paired wall-time ratio; CPU-time ratio {cpu_ratio:.2f}x"
        )
        rows.append(row)
    return rows
