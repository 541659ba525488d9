"""Framework overhead: time per training epoch of graphbench's ``train(cfg)`` (Lightning, callbacks,
logger, progress bar and all) against a hand-written PyG loop that trains the identical network
(``network_builder(cfg, info)`` at the same seed) with the same optimizer and loss on the same
batches, and validates after every epoch as graphbench does. Both time an epoch from its start to
the end of its last step, as ``results.json``'s ``time_per_epoch_s`` does (validation falls outside
that span on both sides), and leave out the first epoch of a run (warm-up). Each row's note splits
the epoch into the network's forward passes, its backward passes and the rest, marked at the same
points on both sides: where the framework's cost lands, including what its work between kernels
does to the kernels that follow (caches, the thread pool). The note also gives what follows an
epoch's last step until the next epoch starts (the last epoch: until training ends): validation,
the epoch's figures, logging and checkpoints, which the per-epoch figure leaves out on both sides
and which a run pays all the same. A third contender, the loop kept busy after each validation for
as long as graphbench's epoch end outlasts the loop's (a wait that touches no data), shows how much
of the gap that time alone causes in the epoch that follows: the caches and thread pool the next
epoch starts with age with the time since the data was last touched. A fourth, Lightning alone (the
loop's loss as the only work of a LightningModule's steps, under a Trainer with no logger, callbacks
or checkpoints), is the floor of any platform built on Lightning's loop: the gap between it and the
loop is Lightning's, the rest graphbench's.

A last row takes the compute away: the ``dispatch`` group's batch of four tiny molecules
(:func:`benchmarks.dispatch.tiny_batch`) and its LRGB-tuned GCN, ``STEPS_PER_EPOCH`` copies of the
batch an epoch, so that a step is almost all per-step cost. graphbench's Trainer (its task module,
callbacks, loggers and speed-ups as ``train`` builds them: :func:`graphbench.build.model.prepared_model`,
the config's callbacks and loggers, :func:`graphbench.build.trainer.build_trainer`) against the hand loop
training a copy of the same network with the same optimizer, loss and clipping, and Lightning alone;
per training step, over the same span as the other rows. ``GRAPHBENCH_BENCH_OVERHEAD=step`` (or ``epoch``)
measures those rows alone."""

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
from lightning.pytorch.callbacks import Checkpoint
from omegaconf import DictConfig, OmegaConf
from torch.utils.data import DataLoader
from torch_geometric.data import Batch

from benchmarks.common import (
    QUICK_CYCLES,
    Context,
    Row,
    Target,
    chosen_from_env,
    compose_config,
    fmt_s,
    interleaved,
    median,
    paired_ratio,
    slug,
)
from benchmarks.dispatch import SMILES, tiny_batch
from benchmarks.reference import RECIPES
from graphbench import speedups
from graphbench.build.callbacks import build_callbacks
from graphbench.build.data import build_datamodule
from graphbench.build.loggers import open_loggers
from graphbench.build.model import network_builder, network_width, prepared_model
from graphbench.build.task_module import build_optimizer
from graphbench.build.trainer import build_trainer
from graphbench.config.instantiate import METADATA_KEYS, build
from graphbench.data.datamodules import DataModule
from graphbench.data.store.full_batch import full_batch_loader
from graphbench.modules.network import count_parameters
from graphbench.run.record import RunRecord
from graphbench.tasks.train import RunCallbacks, train

#: the recipe of the per-step row: the ``dispatch`` group's first, the LRGB-tuned GCN
DISPATCH_RECIPE = RECIPES[0]

TARGET = Target("<=", 1.05)
#: the per-step row's target: graphbench's Trainer step against the hand loop's at negligible compute
STEP_TARGET = Target("<=", 1.2)
#: the per-step row's steps per epoch and epochs per run (the first left out), and a quick run's
STEPS_PER_EPOCH, STEP_EPOCHS = 50, 4
QUICK_STEPS_PER_EPOCH, QUICK_STEP_EPOCHS = 3, 2


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


class NetworkClock:
    """Wall seconds the network spends in its forward (training mode) and backward passes, summed
    over an epoch's steps: the same marks on both contenders, so that what remains of an epoch's
    span is everything else (loading, loss, metrics, ``zero_grad``, the optimizer step, the
    framework's hooks and whatever the thread pool loses between kernels)."""

    def __init__(self, network: torch.nn.Module) -> None:
        self.forward_s = self.backward_s = 0.0
        self._forward_start = self._backward_start = 0.0
        network.register_forward_pre_hook(self._before_forward)
        network.register_forward_hook(self._after_forward)

    def _before_forward(self, module: torch.nn.Module, *args: Any) -> None:
        if module.training:
            self._forward_start = time.perf_counter()

    def _after_forward(self, module: torch.nn.Module, *args: Any) -> None:
        if module.training:
            self.forward_s += time.perf_counter() - self._forward_start

    def before_backward(self) -> None:
        self._backward_start = time.perf_counter()

    def after_backward(self) -> None:
        self.backward_s += time.perf_counter() - self._backward_start

    def take(self) -> dict[str, float]:
        """The epoch's forward and backward seconds; starts the next epoch's count."""
        sums = {"forward_s": self.forward_s, "backward_s": self.backward_s}
        self.forward_s = self.backward_s = 0.0
        return sums


#: what both contenders record for every training epoch, in seconds; ``after_s`` runs from the end of
#: the epoch's last step to the next epoch's start (or the end of training)
TIMED = ("wall_s", "cpu_s", "forward_s", "backward_s", "after_s")


class EpochClock(L.Callback):
    """Wall and process-CPU seconds of every training epoch, over the span ``ResourceTracker``
    times (epoch start to the end of its last step), the network's share of it
    (:class:`NetworkClock`), and the wall seconds from its last step to the next epoch's start (or
    the end of training); JSON to ``output`` when training ends. Registered last, so that every
    other callback's epoch-start hooks fall before the epoch's start and its batch-end hooks
    before the step's end."""

    def __init__(self, output: str) -> None:
        self.output = Path(output)
        self.times: dict[str, list[float]] = {key: [] for key in TIMED}
        self._start = self._last = (0.0, 0.0)
        self._network: NetworkClock | None = None
        self._epoch_open = False  # an epoch has ended whose after_s is not yet recorded

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._network = NetworkClock(pl_module.network)

    def on_train_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        assert self._network is not None
        self._close_epoch()
        self._network.take()
        self._start = self._last = (time.perf_counter(), time.process_time())

    def _close_epoch(self) -> None:
        if self._epoch_open:
            self.times["after_s"].append(time.perf_counter() - self._last[0])
            self._epoch_open = False

    def on_before_backward(self, trainer: L.Trainer, pl_module: L.LightningModule, loss: torch.Tensor) -> None:
        assert self._network is not None
        self._network.before_backward()

    def on_after_backward(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        assert self._network is not None
        self._network.after_backward()

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *args: Any) -> None:
        self._last = (time.perf_counter(), time.process_time())

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        assert self._network is not None
        self.times["wall_s"].append(self._last[0] - self._start[0])
        self.times["cpu_s"].append(self._last[1] - self._start[1])
        for key, value in self._network.take().items():
            self.times[key].append(value)
        self._epoch_open = True

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._close_epoch()
        self.output.write_text(json.dumps(self.times))


@dataclass(frozen=True)
class Measured:
    """Means per training epoch, the first left out when there are more (allocator and cache warm-up)."""

    wall_s: float
    cpu_s: float
    forward_s: float  # the network's forward passes (training mode)
    backward_s: float  # the backward passes
    after_s: float  # from the epoch's last step to the next epoch's start (validation included)
    params: int

    @classmethod
    def of(cls, times: dict[str, list[float]], params: int) -> Measured:
        skip = 1 if len(times["wall_s"]) > 1 else 0
        mean = {key: statistics.fmean(times[key][skip:]) for key in TIMED}
        return cls(**mean, params=params)


def graphbench_epoch(ctx: Context, work: Workload, run_dir: Path) -> Measured:
    """A full ``graphbench.tasks.train.train`` run, timed per epoch by :class:`EpochClock`."""
    clock = run_dir / "epoch_clock.json"
    overrides = [
        *work.overrides,
        f"trainer.max_epochs={work.epochs}",
        f"+callbacks.epoch_clock._target_={EpochClock.__module__}.{EpochClock.__qualname__}",
        f"+callbacks.epoch_clock.output={clock}",
    ]
    results = train(compose_config(ctx, overrides, run_dir))
    return Measured.of(json.loads(clock.read_text()), int(results.num_params))


def busy_wait(seconds: float) -> None:
    """Keeps the thread running for ``seconds`` without touching any data (a sleep would let the core
    idle, which graphbench's Python between epochs does not)."""
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        pass


@dataclass
class Recipe:
    """What both plain contenders train: graphbench's network at the run's seed, its optimizer and the
    dataset's loss, over the same batches."""

    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    loaders: dict[str, Iterable[Batch]]
    loss_of: Callable[[Batch, str], torch.Tensor]  # (batch, split) -> the loss over the split's examples


def recipe(ctx: Context, work: Workload, run_dir: Path) -> Recipe:
    """The network (``network_builder(cfg, info)`` at the same seed as ``train``), optimizer and loss of
    the workload's config, over graphbench's DataLoaders for graph-level tasks (so the plain contenders
    get graphbench's bulk batching too and the figure isolates the framework), over the one graph for
    full-batch node classification."""
    cfg = compose_config(ctx, work.overrides, run_dir)
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    datamodule = build_datamodule(cfg)
    datamodule.prepare_data()
    datamodule.setup("fit")
    info = datamodule.info
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    model = network_builder(cfg, info)(int(cfg.model.hidden_dim))
    optimizer = build_optimizer(cfg)(model.parameters())  # as train() builds it
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

    return Recipe(model, optimizer, loaders, loss_of)


def hand_written_epoch(ctx: Context, work: Workload, run_dir: Path, pause_s: float = 0.0) -> Measured:
    """The :func:`recipe` in a plain PyTorch loop.

    Like graphbench (and PyG's own examples), the loop evaluates the validation split after every
    training epoch, outside the timed span: what runs between two epochs leaves its mark on the
    caches and thread pool the next epoch starts with, so a loop that never validated would not be
    the experiment graphbench runs. With ``pause_s`` it then waits that long (:func:`busy_wait`)."""
    plain = recipe(ctx, work, run_dir)
    model, optimizer, loaders, loss_of = plain.model, plain.optimizer, plain.loaders, plain.loss_of
    network = NetworkClock(model)
    times: dict[str, list[float]] = {key: [] for key in TIMED}
    for _ in range(work.epochs):
        model.train()
        start, cpu_start = time.perf_counter(), time.process_time()
        for batch in loaders["train"]:
            optimizer.zero_grad()
            loss = loss_of(batch, "train")
            network.before_backward()
            loss.backward()
            network.after_backward()
            optimizer.step()
        end = time.perf_counter()
        times["wall_s"].append(end - start)
        times["cpu_s"].append(time.process_time() - cpu_start)
        for key, value in network.take().items():
            times[key].append(value)
        model.eval()
        with torch.inference_mode():
            val_loss = sum(float(loss_of(batch, "val")) for batch in loaders["val"])
        if not math.isfinite(val_loss):
            raise AssertionError(f"{work.case}: the hand-written loop's validation loss is {val_loss}")
        busy_wait(pause_s)
        times["after_s"].append(time.perf_counter() - end)
    return Measured.of(times, count_parameters(model))


class LossOnly(L.LightningModule):
    """The smallest LightningModule of the :func:`recipe`: its steps compute the loss and nothing else
    (no metrics, no logging)."""

    def __init__(self, plain: Recipe) -> None:
        super().__init__()
        self.network = plain.model
        self.plain = plain

    def training_step(self, batch: Batch, batch_idx: int) -> torch.Tensor:
        return self.plain.loss_of(batch, "train")

    def validation_step(self, batch: Batch, batch_idx: int) -> None:
        self.plain.loss_of(batch, "val")

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return self.plain.optimizer


def lightning_alone_epoch(ctx: Context, work: Workload, run_dir: Path) -> Measured:
    """The :func:`recipe` as :class:`LossOnly` under a ``Trainer`` with Lightning's defaults but no
    logger, checkpoints, progress bar or model summary: what Lightning's own loop costs, the floor of
    any platform built on it. Timed by :class:`EpochClock`, its only callback. The one graph of a
    full-batch task is served as graphbench serves it, by :func:`full_batch_loader` (Lightning takes
    a list for several loaders)."""
    plain = recipe(ctx, work, run_dir)
    if isinstance(plain.loaders["train"], list):
        plain.loaders = {split: full_batch_loader(graph) for split, (graph,) in plain.loaders.items()}
    return fit_loss_only(plain, run_dir, work.epochs)


def fit_loss_only(plain: Recipe, run_dir: Path, epochs: int, clip: float | None = None) -> Measured:
    """``plain`` as :class:`LossOnly` under a bare ``Trainer`` (no logger, checkpoints, progress bar or
    model summary; gradients clipped at norm ``clip`` when given), timed by :class:`EpochClock`."""
    run_dir.mkdir(parents=True, exist_ok=True)
    clock = EpochClock(str(run_dir / "epoch_clock.json"))
    trainer = L.Trainer(
        max_epochs=epochs,
        callbacks=[clock],
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        gradient_clip_val=clip,
        default_root_dir=run_dir,
    )
    trainer.fit(LossOnly(plain), plain.loaders["train"], plain.loaders["val"])
    return Measured.of(clock.times, count_parameters(plain.model))


def _itself(batch: Batch) -> Batch:
    return batch


def tiny_loader(batch: Batch, steps: int) -> DataLoader:
    """``steps`` times ``batch``, as a ``DataLoader`` (one batch a step, nothing collated)."""
    return DataLoader([batch] * steps, batch_size=None, shuffle=False, collate_fn=_itself)


def tiny_config(ctx: Context, run_dir: Path, epochs: int) -> DictConfig:
    """The ``dispatch`` group's recipe (LRGB-tuned GCN) as ``train`` would run it for ``epochs`` epochs."""
    return compose_config(
        ctx, [DISPATCH_RECIPE.experiment, f"trainer.max_epochs={epochs}", "trainer.enable_progress_bar=false"], run_dir
    )


def tiny_batch_of(cfg: DictConfig) -> tuple[Batch, DataModule]:
    datamodule = build_datamodule(cfg)  # Peptides-func knows its facts without its data
    return tiny_batch(build(cfg.pe.transform, "pe.transform", METADATA_KEYS), datamodule.info.num_outputs), datamodule


def graphbench_steps(ctx: Context, run_dir: Path, steps: int, epochs: int) -> Measured:
    """graphbench's Trainer on the tiny batch: the task module, callbacks and loggers ``train`` builds
    from the config, :class:`EpochClock` last, inside the run's speed-up scope."""
    cfg = tiny_config(ctx, run_dir, epochs)
    batch, datamodule = tiny_batch_of(cfg)
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    record = RunRecord(status="running", config=OmegaConf.to_container(cfg, resolve=True), run_dir=str(run_dir))
    module = prepared_model(cfg, datamodule, record)
    parts = RunCallbacks.of(build_callbacks(cfg))
    loggers: list[Any] = []
    open_loggers(cfg, record, loggers)
    clock = EpochClock(str(run_dir / "epoch_clock.json"))
    with speedups.run_scope(cfg.speedups.enabled):
        trainer = build_trainer(
            cfg,
            [*parts.trainer_callbacks(record), clock],
            loggers,
            str(run_dir),
            enable_checkpointing=any(isinstance(c, Checkpoint) for c in parts.built),
        )
        trainer.fit(module, tiny_loader(batch, steps), tiny_loader(batch, 1))
    return Measured.of(clock.times, count_parameters(module.network))


def tiny_recipe(ctx: Context, run_dir: Path, steps: int, epochs: int) -> tuple[Recipe, float]:
    """The plain contenders' :class:`Recipe` on the tiny batch (the network at the run's seed, the
    recipe's optimizer and loss), and its gradient clipping norm."""
    cfg = tiny_config(ctx, run_dir, epochs)
    batch, datamodule = tiny_batch_of(cfg)
    info = datamodule.info
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    model = network_builder(cfg, info)(network_width(cfg, network_builder(cfg, info)))
    optimizer = build_optimizer(cfg)(model.parameters())  # as train() builds it
    loss_fn = build(cfg.dataset.module.loss, "dataset.module.loss")

    def loss_of(batch: Batch, split: str) -> torch.Tensor:
        out = model(batch)
        return loss_fn(out, batch.y.float().view(out.shape))

    loaders: dict[str, Iterable[Batch]] = {"train": tiny_loader(batch, steps), "val": tiny_loader(batch, 1)}
    return Recipe(model, optimizer, loaders, loss_of), float(cfg.trainer.gradient_clip_val)


def hand_written_steps(ctx: Context, run_dir: Path, steps: int, epochs: int) -> Measured:
    """The tiny :class:`Recipe` in a plain loop (``zero_grad``, loss, backward, clipping, step),
    validating after every epoch outside the timed span, as :func:`hand_written_epoch`."""
    plain, clip = tiny_recipe(ctx, run_dir, steps, epochs)
    network = NetworkClock(plain.model)
    times: dict[str, list[float]] = {key: [] for key in TIMED}
    for _ in range(epochs):
        plain.model.train()
        start, cpu_start = time.perf_counter(), time.process_time()
        for batch in plain.loaders["train"]:
            plain.optimizer.zero_grad()
            loss = plain.loss_of(batch, "train")
            network.before_backward()
            loss.backward()
            network.after_backward()
            torch.nn.utils.clip_grad_norm_(plain.model.parameters(), clip)
            plain.optimizer.step()
        end = time.perf_counter()
        times["wall_s"].append(end - start)
        times["cpu_s"].append(time.process_time() - cpu_start)
        for key, value in network.take().items():
            times[key].append(value)
        plain.model.eval()
        with torch.inference_mode():
            val_loss = sum(float(plain.loss_of(batch, "val")) for batch in plain.loaders["val"])
        if not math.isfinite(val_loss):
            raise AssertionError(f"the hand-written loop's validation loss on the tiny batch is {val_loss}")
        times["after_s"].append(time.perf_counter() - end)
    return Measured.of(times, count_parameters(plain.model))


def lightning_alone_steps(ctx: Context, run_dir: Path, steps: int, epochs: int) -> Measured:
    """The tiny :class:`Recipe` as :class:`LossOnly` under a bare ``Trainer`` (as
    :func:`lightning_alone_epoch`), clipping as the recipe does."""
    plain, clip = tiny_recipe(ctx, run_dir, steps, epochs)
    return fit_loss_only(plain, run_dir, epochs, clip)


def tiny_step_row(ctx: Context) -> Row:
    """graphbench's Trainer step against the hand loop's and Lightning's alone, at negligible compute."""
    steps, epochs = (QUICK_STEPS_PER_EPOCH, QUICK_STEP_EPOCHS) if ctx.quick else (STEPS_PER_EPOCH, STEP_EPOCHS)
    row = Row(
        "overhead: time / training step",
        f"LRGB-tuned {DISPATCH_RECIPE.label}, {len(SMILES)} tiny molecules a step ({steps} steps an epoch), 1 thread",
        target=STEP_TARGET,
    )
    contenders = {"graphbench": graphbench_steps, "hand": hand_written_steps, "lightning": lightning_alone_steps}
    runs: dict[str, list[Measured]] = {name: [] for name in contenders}

    def contender(name: str) -> Callable[[], float]:
        def call() -> float:
            run_dir = ctx.work_dir / "overhead" / "tiny" / f"{name}-{len(runs[name])}"
            runs[name].append(contenders[name](ctx, run_dir, steps, epochs))
            return runs[name][-1].wall_s / steps

        return call

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the dispatch group: a second thread only waits at this size
    try:
        per_step = interleaved({name: contender(name) for name in contenders}, ctx.repeats)
    finally:
        torch.set_num_threads(threads)
    params = {m.params for ms in runs.values() for m in ms}
    if len(params) != 1:
        raise AssertionError(f"the tiny-batch contenders built different models ({params} parameters)")
    network = {name: median([(m.forward_s + m.backward_s) / steps for m in runs[name]]) for name in ("graphbench", "hand")}
    row.graphbench = fmt_s(median(per_step["graphbench"]))
    row.reference = fmt_s(median(per_step["hand"])) + " (hand-written loop)"
    row.figure = paired_ratio(per_step["graphbench"], per_step["hand"])
    row.note = (
        f"median paired ratio of the time per step (an epoch's span over its steps, the first of {epochs} epochs left out), "
        f"interleaved runs: {ctx.repeats}, {params.pop():,} params; the network's forward and backward passes "
        f"{fmt_ms(network['graphbench'])} vs {fmt_ms(network['hand'])} a step; Lightning alone (the loop's loss "
        f"in a LightningModule, no metrics, logging, callbacks or checkpoints) {fmt_s(median(per_step['lightning']))} "
        f"a step ({paired_ratio(per_step['lightning'], per_step['hand']):.2f}x the loop's)"
    )
    return row


def split_epoch(runs: list[Measured]) -> dict[str, float]:
    """Median over runs of each part of the epoch's span, in seconds: the network's forward and
    backward passes, and everything else."""
    return {
        "network forward": median([m.forward_s for m in runs]),
        "backward": median([m.backward_s for m in runs]),
        "the rest": median([m.wall_s - m.forward_s - m.backward_s for m in runs]),
    }


def whole_epochs(runs: list[Measured]) -> list[float]:
    """Each run's epoch span plus what follows it until the next epoch: the time a run takes per
    epoch, validation included."""
    return [m.wall_s + m.after_s for m in runs]


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


#: the kinds of row of this group, as ``GRAPHBENCH_BENCH_OVERHEAD`` names them
KINDS: tuple[str, ...] = ("epoch", "step")


def chosen_kinds() -> tuple[str, ...]:
    """``GRAPHBENCH_BENCH_OVERHEAD`` (comma-separated) or every kind of row."""
    return chosen_from_env("GRAPHBENCH_BENCH_OVERHEAD", KINDS, "row kind")


def run(ctx: Context) -> list[Row]:
    rows = []
    kinds = chosen_kinds()
    for work in workloads(ctx.quick) if "epoch" in kinds else []:
        row = Row("overhead: time / training epoch", work.case, target=TARGET)
        if work.raw and not ctx.has_raw(work.raw):
            row.skipped = f"no raw files at {ctx.data_dir / work.raw}"
            rows.append(row)
            continue
        runs: dict[str, list[Measured]] = {"graphbench": [], "hand": [], "paced": [], "lightning": []}

        def contender(name: str, fn: Callable[[Context, Workload, Path], Measured]) -> Callable[[], float]:
            def call() -> float:
                run_dir = ctx.work_dir / "overhead" / slug(work.case) / f"{name}-{len(runs[name])}"
                runs[name].append(fn(ctx, work, run_dir))
                return runs[name][-1].wall_s

            return call

        def paced(ctx: Context, work: Workload, run_dir: Path) -> Measured:
            # graphbench's extra time between epochs, as last measured (this round's, or the previous
            # round's when the alternating order runs this contender first)
            pause = max(0.0, runs["graphbench"][-1].after_s - runs["hand"][-1].after_s)
            return hand_written_epoch(ctx, work, run_dir, pause_s=pause)

        wall = interleaved(
            {
                "graphbench": contender("graphbench", graphbench_epoch),
                "hand": contender("hand", hand_written_epoch),
                "paced": contender("paced", paced),
                "lightning": contender("lightning", lightning_alone_epoch),
            },
            ctx.repeats,
        )
        params = {m.params for ms in runs.values() for m in ms}
        if len(params) != 1:
            raise AssertionError(f"{work.case}: the two contenders built different models ({params} parameters)")
        cpu_ratio = paired_ratio([m.cpu_s for m in runs["graphbench"]], [m.cpu_s for m in runs["hand"]])
        row.graphbench = fmt_s(median(wall["graphbench"]))
        row.reference = fmt_s(median(wall["hand"])) + " (hand-written loop)"
        row.figure = paired_ratio(wall["graphbench"], wall["hand"])
        parts = {side: split_epoch(runs[side]) for side in ("graphbench", "hand")}
        whole = {side: whole_epochs(runs[side]) for side in ("graphbench", "hand")}
        row.note = (
            f"epochs per run: {work.epochs} (the first, warm-up, left out), interleaved runs: {ctx.repeats}, {params.pop():,} params; "
            f"figure: median paired wall-time ratio; CPU-time ratio {cpu_ratio:.2f}x; per epoch, graphbench vs hand-written: "
            + ", ".join(
                f"{part} {fmt_ms(parts['graphbench'][part])} vs {fmt_ms(parts['hand'][part])}" for part in parts["graphbench"]
            )
            + f"; after the last step until the next epoch (validation, the epoch's figures, logging, checkpoints): "
            f"{fmt_ms(median([m.after_s for m in runs['graphbench']]))} vs {fmt_ms(median([m.after_s for m in runs['hand']]))}, "
            f"so a whole epoch takes {fmt_ms(median(whole['graphbench']))} vs {fmt_ms(median(whole['hand']))} "
            f"({paired_ratio(whole['graphbench'], whole['hand']):.2f}x); the loop kept busy "
            f"{fmt_ms(median([p.after_s - h.after_s for p, h in zip(runs['paced'], runs['hand'])]))} longer after each "
            f"validation, as long as graphbench's epoch end: its epoch {fmt_ms(median(wall['paced']))} "
            f"({paired_ratio(wall['paced'], wall['hand']):.2f}x the unpaced loop's); Lightning alone (the loop's "
            f"loss in a LightningModule without metrics, logging, callbacks or checkpoints): its epoch "
            f"{fmt_ms(median(wall['lightning']))} ({paired_ratio(wall['lightning'], wall['hand']):.2f}x the loop's)"
        )
        rows.append(row)
    if "step" in kinds:
        rows.append(tiny_step_row(ctx))
    return rows
