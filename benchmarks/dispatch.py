"""The per-step cost of a training step at negligible compute: what dominates on a GPU.

A training step of the LRGB-tuned recipes needs ~1 ms of an H200's time; the rest of its wall time
is Python, operator dispatch and kernel launches. This group measures that cost without
a GPU: one CPU thread (``torch.set_num_threads(1)``), one batch of four tiny molecules (acetic acid,
benzene, ethylamine, glycerol: 19 heavy atoms), the LRGB-tuned GCN, GINE and GatedGCN built by graphbench's
own builders from ``experiment=lrgb-tuned/peptides-func-*`` (the authors' width, RWSE from the recipe's
transform, the recipe's optimizer), for four contenders:

* ``eager``: graphbench's network as it is built;
* ``compiled``: a copy of it through :func:`graphbench.speedups.compile_network` (what ``model.compile=true``
  does: ``torch.compile`` of its forward, dynamic shapes);
* ``compiled with buckets``: a copy compiled with static shapes (``dynamic=False``, ``fullgraph=True``: what
  ``model.compile=true dataset.pad_to=buckets`` does), trained on the batch padded to a bucket of the next
  multiples of 8 nodes and edges (:func:`graphbench.data.store.padding.pad_batch`; the loss over the real graphs);
* ``reference``: the recipe written from plain PyG (:class:`benchmarks.reference.ReferenceNet`:
  ``GCNConv`` / ``GINEConv`` / a GatedGCN ``MessagePassing`` layer, as toenshoff/LRGB builds them, AdamW), with
  graphbench's initial weights.

Each contender runs the same hand loop (:func:`train_steps`: ``zero_grad``, forward, BCE with logits,
backward, clipping at norm 1, AdamW step: graphbench's contenders build theirs as a run does, fused
under ``speedups=auto``, the reference as LRGB's code does, torch's default; no host sync inside the loop), ``steps`` steps per round,
in interleaved rounds; the figure is the median of the per-round ratios of compiled over reference
steps per second. Lightning's own loop is not part of the step here (the ``overhead`` group measures
it). Each contender's operator calls per training step are counted with :mod:`torch.profiler`: the
``aten::`` events of one step (nested calls count too, e.g. ``aten::linear`` and the ``aten::addmm``
it calls), after warm-up.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from ogb.utils import smiles2graph
from omegaconf import DictConfig
from torch import Tensor, nn
from torch.nn import functional as F
from torch.profiler import ProfilerActivity, profile
from torch_geometric.data import Batch, Data
from torch_geometric.transforms import BaseTransform

from benchmarks.common import Context, Row, Target, compose_config, interleaved, median, paired_ratio
from benchmarks.reference import RECIPES, Recipe, ReferenceNet, copy_weights
from graphbench.build.data import build_datamodule
from graphbench.build.model import network_builder, network_width
from graphbench.build.task_module import build_optimizer
from graphbench.config.instantiate import METADATA_KEYS, build
from graphbench.data.store.padding import Bucket, pad_batch, real_graphs, round_up
from graphbench.speedups import compile_network

#: the target: graphbench compiled against the plain-PyG reference, in steps per second
TARGET = Target(">=", 2.0)
#: the tiny molecules of the one batch
SMILES: tuple[str, ...] = ("CC(=O)O", "c1ccccc1", "CCN", "OCC(O)CO")
#: timed steps per round, and untimed steps before the first round (compilation happens there)
STEPS, QUICK_STEPS, WARMUP_STEPS = 40, 3, 3
CONTENDERS: tuple[str, ...] = ("eager", "compiled", "buckets", "reference")
#: each contender's name in the table
LABELS: dict[str, str] = {"eager": "eager", "compiled": "compiled", "buckets": "compiled with buckets", "reference": "reference"}
Optimizer = Callable[[Sequence[nn.Parameter]], torch.optim.Optimizer]


def tiny_batch(pe_transform: BaseTransform, num_outputs: int) -> Batch:
    """:data:`SMILES` featurized as OGB's ``smiles2graph`` does (graphbench's featurizer gives the
    same graphs), each with the recipe's PE and fixed random labels, as one batch."""
    labels = torch.randint(0, 2, (len(SMILES), num_outputs), generator=torch.Generator().manual_seed(0)).float()
    graphs = []
    for index, smiles in enumerate(SMILES):
        graph = smiles2graph(smiles)
        data = Data(
            x=torch.from_numpy(graph["node_feat"]).long(),
            edge_index=torch.from_numpy(graph["edge_index"]).long(),
            edge_attr=torch.from_numpy(graph["edge_feat"]).long(),
            y=labels[index : index + 1],
        )
        graphs.append(pe_transform(data))
    return Batch.from_data_list(graphs)


def padded(batch: Batch) -> Batch:
    """``batch`` padded to the next multiples of 8 nodes (one dummy node at least) and edges, and one dummy graph."""
    bucket = Bucket(round_up(batch.num_nodes + 1), round_up(batch.num_edges))
    return pad_batch(batch, bucket, graphs=batch.num_graphs + 1)


def train_steps(model: nn.Module, optimizer: torch.optim.Optimizer, batch: Batch, steps: int) -> tuple[float, Tensor]:
    """Wall seconds of ``steps`` training steps on ``batch`` (the recipe's: BCE with logits, clipping
    at norm 1), and the last loss; nothing in the loop waits for a value."""
    model.train()
    start = time.perf_counter()
    loss = torch.zeros(())
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.binary_cross_entropy_with_logits(real_graphs(model(batch), batch), batch.y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
    return time.perf_counter() - start, loss.detach()


def operator_calls(model: nn.Module, optimizer: torch.optim.Optimizer, batch: Batch) -> int:
    """``aten::`` operator calls of one training step, as :mod:`torch.profiler` records them."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        train_steps(model, optimizer, batch, 1)
    return sum(1 for event in prof.events() if event.name.startswith("aten::"))


@dataclass
class Contenders:
    models: dict[str, nn.Module]
    optimizers: dict[str, torch.optim.Optimizer]
    width: int
    params: int
    batches: dict[str, Batch]


def contenders(ctx: Context, recipe: Recipe) -> Contenders:
    """The contenders of ``recipe``, from one set of initial weights, and the tiny batch each trains on."""
    cfg: DictConfig = compose_config(ctx, [recipe.experiment], ctx.work_dir / "dispatch" / recipe.name)
    info = build_datamodule(cfg).info  # Peptides-func knows its facts without its data
    make = network_builder(cfg, info)
    width = network_width(cfg, make)
    torch.manual_seed(int(cfg.seed))
    eager = make(width)
    reference = ReferenceNet(
        recipe.name,
        width,
        int(cfg.model.num_layers),
        int(cfg.pe.k),
        info.num_outputs,
        float(cfg.model.dropout),
        int(cfg.pe.concat_dim),
    )
    copy_weights(eager, reference)
    compiled = compile_network(copy.deepcopy(eager))
    bucketed = compile_network(copy.deepcopy(eager), static_shapes=True)
    make_optimizer: Optimizer = build_optimizer(cfg)  # fused under speedups=auto, as a run builds it
    models = {"eager": eager, "compiled": compiled, "buckets": bucketed, "reference": reference}
    optimizers = {
        "eager": make_optimizer(eager.parameters()),
        "compiled": make_optimizer(compiled.parameters()),
        "buckets": make_optimizer(bucketed.parameters()),
        "reference": torch.optim.AdamW(reference.parameters(), lr=1e-3, weight_decay=0.0),  # as reference.train_steps
    }
    batch = tiny_batch(build(cfg.pe.transform, "pe.transform", METADATA_KEYS), info.num_outputs)
    batches = {name: padded(batch) if name == "buckets" else batch for name in CONTENDERS}
    return Contenders(models, optimizers, width, sum(p.numel() for p in eager.parameters()), batches)


def run(ctx: Context) -> list[Row]:
    """One row per recipe; a quick run (a smoke test, figures meaningless) the GCN row alone: each
    compilation takes minutes on a busy 2-core machine."""
    torch.set_num_threads(1)
    return [run_recipe(ctx, recipe) for recipe in (RECIPES[:1] if ctx.quick else RECIPES)]


def run_recipe(ctx: Context, recipe: Recipe) -> Row:
    """The row of one recipe: steps per second and operator calls per step of every contender."""
    setup = contenders(ctx, recipe)
    steps = QUICK_STEPS if ctx.quick else STEPS
    row = Row(
        "dispatch: training steps / s",
        f"LRGB-tuned {recipe.label}, {len(SMILES)} tiny molecules ({setup.batches['eager'].num_nodes} atoms), 1 thread",
        target=TARGET,
    )
    failed: dict[str, str] = {}
    warmup_s: dict[str, float] = {}
    for name in CONTENDERS:
        try:
            warmup_s[name], _ = train_steps(setup.models[name], setup.optimizers[name], setup.batches[name], WARMUP_STEPS)
        except Exception as exc:  # compilation may fail on some torch versions: the row says so
            failed[name] = f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:200]
    running = [name for name in CONTENDERS if name not in failed]
    times = interleaved(
        {
            name: (lambda name=name: train_steps(setup.models[name], setup.optimizers[name], setup.batches[name], steps)[0])
            for name in running
        },
        ctx.repeats,
    )
    ops = {name: operator_calls(setup.models[name], setup.optimizers[name], setup.batches[name]) for name in running}

    def cell(name: str) -> str:
        if name in failed:
            return f"{LABELS[name]}: failed ({failed[name]})"
        return f"{LABELS[name]}: {steps / median(times[name]):.1f} steps/s, {ops[name]:,} aten ops/step"

    row.graphbench = "; ".join(cell(name) for name in ("eager", "compiled", "buckets"))
    row.reference = cell("reference") + " (plain PyG)"
    if "reference" not in failed and "eager" not in failed:
        eager_ratio = f"eager {paired_ratio(times['reference'], times['eager']):.2f}x the reference"
    else:
        eager_ratio = "no eager ratio"
    if "reference" not in failed and "buckets" not in failed:
        eager_ratio += f", compiled with buckets {paired_ratio(times['reference'], times['buckets']):.2f}x"
    if failed:
        row.skipped = f"{', '.join(failed)} failed: {'; '.join(failed.values())}"
    else:
        row.figure = paired_ratio(times["reference"], times["compiled"])
    row.note = (
        f"compiled / reference steps per second (median paired ratio), {eager_ratio}; interleaved rounds: {ctx.repeats} "
        f"of {steps} steps; width {setup.width}, {setup.params:,} params; first {WARMUP_STEPS} steps untimed "
        f"(compiled: {warmup_s.get('compiled', float('nan')):.1f} s, with buckets: {warmup_s.get('buckets', float('nan')):.1f} s, "
        f"compilation included); with buckets: {setup.batches['buckets'].num_nodes} nodes, {setup.batches['buckets'].num_edges} edges"
    )
    return row
