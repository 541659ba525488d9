"""graphbench against the same recipe written from plain PyG modules (GraphGPS-style code).

For the LRGB-tuned GCN, GINE and GatedGCN recipes on Peptides-func, :class:`ReferenceNet` is built
only from PyG and torch modules (``GCNConv``, ``GINEConv``, a GatedGCN layer written from its
equations on PyG's ``MessagePassing``, ``BatchNorm1d``, ``global_mean_pool``, ``Linear``, and OGB's
``AtomEncoder`` / ``BondEncoder`` as LRGB's code uses them); none of graphbench's network code. It
gets graphbench's initial weights (copied by an explicit name mapping) and trains on the same
batches with the same optimizer (AdamW, gradient clipping at 1), loss and dropout masks (the RNG is
reseeded before every step). Reported:

* time per training "epoch" of ``batches`` steps, the two models interleaved in one process, the
  median of the per-round ratios;
* peak RSS (``VmHWM``) of each model training the same steps in a fresh subprocess
  (``python -m benchmarks.reference``), the median of ``repeats`` such processes, with the
  dataset's caches built beforehand;
* the largest |loss difference| over the first 20 steps: it proves graphbench's network computes
  the reference's maths.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from ogb.graphproppred.mol_encoder import AtomEncoder, BondEncoder
from omegaconf import DictConfig
from torch import Tensor, nn
from torch.nn import functional as F
from torch_geometric.data import Batch
from torch_geometric.nn import GCNConv, GINEConv, MessagePassing, global_mean_pool

from benchmarks.common import REPO, Context, Row, Target, compose_config, fmt_s, interleaved, median, paired_ratio
from benchmarks.peptides import RAW, datamodule
from graphbench.build.data import build_datamodule
from graphbench.build.model import network_builder, network_width
from graphbench.callbacks.resources import peak_rss_mb
from graphbench.config.instantiate import METADATA_KEYS, build
from graphbench.data.datamodules import DataModule

#: the targets: speed-up of graphbench's epoch over the reference's
SPEEDUP = {"gcn": Target(">=", 1.5), "gine": Target(">=", 1.2), "gatedgcn": Target(">=", 1.2)}
#: losses of the two models may differ by float summation order only
LOSS_TOLERANCE = 1e-4
#: steps whose losses are compared
LOSS_STEPS = 20
QUICK_LIMIT, QUICK_BATCH, QUICK_STEPS = 96, 16, 3
#: training steps of the peak-RSS subprocesses: the peak is reached within the first steps
RSS_STEPS = 3
#: the two contenders of every row
MODELS: tuple[str, ...] = ("graphbench", "reference")


class GatedGCNConv(MessagePassing):
    r"""Residual gated graph convnet layer (Bresson & Laurent 2017; Dwivedi et al. 2020, eq. 16-18),
    written as GraphGPS writes it: :math:`\hat e_{ij} = C e_{ij} + D h_i + E h_j`,
    :math:`h_i' = A h_i + \sum_j \sigma(\hat e_{ij}) \odot B h_j / (\sum_j \sigma(\hat e_{ij}) + 10^{-6})`."""

    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__(aggr="add")
        self.A, self.B, self.C, self.D, self.E = (nn.Linear(dim, dim) for _ in range(5))
        self.eps = eps
        self.e_hat: Tensor | None = None

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor) -> tuple[Tensor, Tensor]:
        summed = self.propagate(edge_index, Bx=self.B(x), Dx=self.D(x), Ex=self.E(x), Ce=self.C(edge_attr))
        num, den = summed.chunk(2, dim=-1)
        e_hat, self.e_hat = self.e_hat, None
        assert e_hat is not None
        return self.A(x) + num / (den + self.eps), e_hat

    def message(self, Bx_j: Tensor, Dx_i: Tensor, Ex_j: Tensor, Ce: Tensor) -> Tensor:
        self.e_hat = Dx_i + Ex_j + Ce
        gate = torch.sigmoid(self.e_hat)
        return torch.cat([gate * Bx_j, gate], dim=-1)


class ReferenceNet(nn.Module):
    """The LRGB-tuned Peptides-func model of toenshoff/LRGB (``graphgps/network/custom_gnn.py`` with
    ``graphgps/layer/{gcn_conv,gine_conv,gatedgcn}_layer.py`` and ``graphgps/head/mlp_graph.py``) as plain
    PyG code: an atom encoder of width ``dim - dim_pe`` concatenated with Linear(BatchNorm1d(RWSE)) of
    width ``dim_pe``; ``layers`` blocks, GCN ``h + Dropout(GELU(conv(h)))``, GINE ``h + conv(h)`` with
    ``GINEConv(Linear GELU Dropout Linear Dropout)`` and eps fixed at 0, GatedGCN
    ``h + Dropout(ReLU(BatchNorm1d(.)))`` on nodes and edges; mean pooling; the 3-layer ``mlp_graph`` head
    with dropout before every linear map."""

    def __init__(self, kind: str, dim: int, layers: int, k: int, out_dim: int, dropout: float, dim_pe: int) -> None:
        super().__init__()
        self.kind = kind
        self.atom_encoder = AtomEncoder(dim - dim_pe)
        self.rwse_norm = nn.BatchNorm1d(k)
        self.rwse_lin = nn.Linear(k, dim_pe)
        self.bond_encoder = BondEncoder(dim)  # built under GCN too (edge_encoder: True), read by GINE and GatedGCN
        convs: list[nn.Module] = []
        for _ in range(layers):
            if kind == "gcn":
                convs.append(GCNConv(dim, dim))
            elif kind == "gine":
                mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Dropout(dropout), nn.Linear(dim, dim), nn.Dropout(dropout))
                convs.append(GINEConv(mlp, train_eps=False))
            else:
                convs.append(GatedGCNConv(dim))
        self.convs = nn.ModuleList(convs)
        self.norms = nn.ModuleList(nn.BatchNorm1d(dim) for _ in range(layers if kind == "gatedgcn" else 0))
        self.edge_norms = nn.ModuleList(nn.BatchNorm1d(dim) for _ in range(layers if kind == "gatedgcn" else 0))
        self.dropout = dropout
        self.head = nn.Sequential(
            nn.Dropout(dropout), nn.Linear(dim, dim), nn.GELU(),
            nn.Dropout(dropout), nn.Linear(dim, dim), nn.GELU(),
            nn.Dropout(dropout), nn.Linear(dim, out_dim),
        )  # fmt: skip

    def gated_block(self, h: Tensor, h_new: Tensor, norm: nn.Module) -> Tensor:
        return h + F.dropout(F.relu(norm(h_new)), self.dropout, self.training)

    def forward(self, data: Batch) -> Tensor:
        h = torch.cat([self.atom_encoder(data.x), self.rwse_lin(self.rwse_norm(data.rwse))], dim=-1)
        e = self.bond_encoder(data.edge_attr) if self.kind != "gcn" else None
        for index, conv in enumerate(self.convs):
            if self.kind == "gcn":
                h = h + F.dropout(F.gelu(conv(h, data.edge_index)), self.dropout, self.training)
            elif self.kind == "gine":
                h = h + conv(h, data.edge_index, e)
            else:
                h_new, e_new = conv(h, data.edge_index, e)
                h = self.gated_block(h, h_new, self.norms[index])
                e = self.gated_block(e, e_new, self.edge_norms[index])
        return self.head(global_mean_pool(h, data.batch))


#: graphbench's state-dict names -> ReferenceNet's (regex, replacement), tried in order
NAME_MAP: list[tuple[str, str]] = [
    (r"^node_encoder\.", "atom_encoder."),
    (r"^edge_encoder\.", "bond_encoder."),
    (r"^pe_encoder\.norm\.", "rwse_norm."),
    (r"^pe_encoder\.linear\.", "rwse_lin."),
    (r"^layers\.(\d+)\.conv\.", r"convs.\1."),  # GCNConv / GINEConv, wrapped by graphbench's layer
    (r"^layers\.(\d+)\.([A-E])\.", r"convs.\1.\2."),  # GatedGCN's five linear maps
    (r"^node_norms\.(\d+)\.norm\.", r"norms.\1."),
    (r"^edge_norms\.(\d+)\.norm\.", r"edge_norms.\1."),
    (r"^head\.mlp\.(\d+)\.", r"head.\1."),
]


def reference_name(name: str) -> str:
    for pattern, replacement in NAME_MAP:
        mapped, count = re.subn(pattern, replacement, name)
        if count:
            return mapped
    raise KeyError(f"no reference parameter for graphbench's {name!r}")


def copy_weights(graphbench: nn.Module, reference: nn.Module) -> None:
    """Every parameter and buffer of ``graphbench`` into ``reference`` by :data:`NAME_MAP`; both
    sides must be covered exactly once with equal shapes."""
    source = {reference_name(k): v for k, v in graphbench.state_dict().items()}
    target = reference.state_dict()
    if set(source) != set(target):
        raise AssertionError(f"name mapping mismatch: {sorted(set(source) ^ set(target))[:6]}")
    reference.load_state_dict(source, strict=True)


@dataclass(frozen=True)
class Recipe:
    name: str  # gcn, gine, gatedgcn
    label: str

    @property
    def experiment(self) -> str:
        return f"experiment=lrgb-tuned/peptides-func-{self.name}"


RECIPES = [Recipe("gcn", "GCN"), Recipe("gine", "GINE"), Recipe("gatedgcn", "GatedGCN")]


@dataclass
class Setup:
    graphbench: nn.Module
    reference: nn.Module
    batches: list[Batch]
    width: int
    params: int


def prepare(ctx: Context, recipe: Recipe, steps: int) -> Setup:
    """Both networks with graphbench's initial weights, and the first ``steps`` training batches."""
    cfg = recipe_config(ctx, recipe)
    dm = ready_datamodule(ctx, cfg)
    make = network_builder(cfg, dm.info)
    width = network_width(cfg, make)
    torch.manual_seed(int(cfg.seed))
    ours = make(width)
    reference = ReferenceNet(
        recipe.name,
        width,
        int(cfg.model.num_layers),
        int(cfg.pe.k),
        dm.info.num_outputs,
        float(cfg.model.dropout),
        int(cfg.pe.concat_dim),
    )
    copy_weights(ours, reference)
    batches = []
    for batch in dm.train_dataloader():
        batches.append(batch)
        if len(batches) == steps:
            break
    params = sum(p.numel() for p in ours.parameters())
    if params != sum(p.numel() for p in reference.parameters()):
        raise AssertionError(f"{recipe.label}: graphbench and the reference have different parameter counts")
    return Setup(ours, reference, batches, width, params)


def train_steps(model: nn.Module, batches: Sequence[Batch], seed: int = 0) -> tuple[float, list[float]]:
    """Wall seconds of one optimizer step per batch (AdamW lr 1e-3, clipping at norm 1, BCE with
    logits: the recipe's), and the losses; dropout masks are fixed by reseeding before every step."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
    model.train()
    losses = []
    start = time.perf_counter()
    for step, batch in enumerate(batches):
        torch.manual_seed(seed + step)
        optimizer.zero_grad()
        loss = F.binary_cross_entropy_with_logits(model(batch), batch.y.float())
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(float(loss.detach()))
    return time.perf_counter() - start, losses


def train_rounds(
    models: dict[str, nn.Module], batches: Sequence[Batch], repeats: int
) -> tuple[dict[str, list[float]], dict[str, list[list[float]]]]:
    """Seconds and losses of :func:`train_steps` for every model, ``repeats`` interleaved rounds, each
    round from the weights the models have at the call. Those are snapshotted: ``state_dict()``
    returns the live parameters, which training changes in place."""
    initial = {name: copy.deepcopy(model.state_dict()) for name, model in models.items()}
    losses: dict[str, list[list[float]]] = {name: [] for name in models}

    def contender(name: str) -> float:
        models[name].load_state_dict(initial[name])
        seconds, step_losses = train_steps(models[name], batches)
        losses[name].append(step_losses)
        return seconds

    return interleaved({name: (lambda name=name: contender(name)) for name in models}, repeats), losses


def peak_rss(ctx: Context, jobs: Sequence[tuple[Recipe, str]], steps: int) -> list[float]:
    """``VmHWM`` in MiB of a fresh process per job (recipe, ``graphbench`` or ``reference``) that prepares
    the recipe's data and networks and trains that model for ``steps`` batches: the median over
    ``ctx.repeats`` rounds of one process per job, the jobs' order reversed every other round (one
    process's peak moves by ~100 MiB from run to run). A quick run (a smoke test, figures meaningless)
    runs every job once, all in one fresh process, one process start and import fewer a job."""
    if ctx.quick and jobs:
        return _peak_rss_in_process(ctx, jobs, steps)
    names = [f"{recipe.name}:{model}" for recipe, model in jobs]
    peaks = interleaved(
        {name: (lambda job=job: _peak_rss_in_process(ctx, [job], steps)[0]) for name, job in zip(names, jobs)}, ctx.repeats
    )
    return [median(peaks[name]) for name in names]


def build_caches(ctx: Context) -> None:
    """Builds every recipe's processed dataset and PE cache in this process, so that no measured
    process pays for building them (the build's own peak would be measured instead)."""
    for recipe in RECIPES:
        ready_datamodule(ctx, recipe_config(ctx, recipe))


def recipe_config(ctx: Context, recipe: Recipe) -> DictConfig:
    return compose_config(ctx, [recipe.experiment], ctx.work_dir / "reference" / recipe.name)


def ready_datamodule(ctx: Context, cfg: DictConfig) -> DataModule:
    """The recipe's DataModule, prepared and set up for fitting (a quick run: the first peptides
    only, small batches)."""
    if ctx.quick:
        dm = datamodule(ctx, QUICK_LIMIT, QUICK_BATCH, build(cfg.pe.transform, "pe.transform", METADATA_KEYS))
    else:
        dm = build_datamodule(cfg)
    dm.prepare_data()
    dm.setup("fit")
    return dm


def _peak_rss_in_process(ctx: Context, jobs: Sequence[tuple[Recipe, str]], steps: int) -> list[float]:
    command = [
        sys.executable,
        "-m",
        "benchmarks.reference",
        "--jobs",
        *(f"{recipe.name}:{model}" for recipe, model in jobs),
        "--steps",
        str(steps),
        "--data-dir",
        str(ctx.data_dir),
        "--cache-dir",
        str(ctx.cache_dir),
        "--work-dir",
        str(ctx.work_dir),
    ] + (["--quick"] if ctx.quick else [])
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return [float(peak) for peak in json.loads(done.stdout.strip().splitlines()[-1])["peak_mb"]]


def run(ctx: Context) -> list[Row]:
    jobs = [(recipe, model) for recipe in RECIPES for model in MODELS] if ctx.has_raw(RAW) else []
    if jobs and not ctx.quick:
        build_caches(ctx)
    peaks = dict(zip(((recipe.name, model) for recipe, model in jobs), peak_rss(ctx, jobs, RSS_STEPS)))
    return [run_recipe(ctx, recipe, {model: peaks.get((recipe.name, model), 0.0) for model in MODELS}) for recipe in RECIPES]


def run_recipe(ctx: Context, recipe: Recipe, rss: dict[str, float]) -> Row:
    """The row of one recipe, with the peak RSS of each model (:func:`peak_rss`)."""
    steps = QUICK_STEPS if ctx.quick else LOSS_STEPS
    row = Row("reference: time / training epoch", f"LRGB-tuned {recipe.label}, Peptides-func", target=SPEEDUP[recipe.name])
    if not ctx.has_raw(RAW):
        row.skipped = f"no raw files at {ctx.data_dir / RAW}"
        return row
    setup = prepare(ctx, recipe, steps)
    times, losses = train_rounds({"graphbench": setup.graphbench, "reference": setup.reference}, setup.batches, ctx.repeats)
    loss_diff = max(abs(a - b) for ours, theirs in zip(losses["graphbench"], losses["reference"]) for a, b in zip(ours, theirs))
    nodes = sum(b.num_nodes for b in setup.batches) / len(setup.batches)
    row.case += f" ({len(setup.batches)} batches of {setup.batches[0].num_graphs} graphs, ~{nodes:,.0f} nodes, as the epoch)"
    row.graphbench = f"{fmt_s(median(times['graphbench']))}, peak RSS {rss['graphbench']:.0f} MiB"
    row.reference = f"{fmt_s(median(times['reference']))}, peak RSS {rss['reference']:.0f} MiB (plain PyG)"
    row.figure = paired_ratio(times["reference"], times["graphbench"])
    same = loss_diff <= LOSS_TOLERANCE
    row.note = (
        f"speed-up (median paired ratio), interleaved rounds: {ctx.repeats}; width {setup.width}, {setup.params:,} params; "
        f"max |loss difference| over the first {len(setup.batches)} steps (every round) {loss_diff:.1e} "
        f"({'within' if same else 'OVER'} {LOSS_TOLERANCE:g}); peak RSS ratio {rss['graphbench'] / rss['reference']:.2f}x "
        f"(median of {1 if ctx.quick else ctx.repeats} fresh processes per model{'' if ctx.quick else ', the data cached beforehand'}: "
        f"data and both networks built, then {RSS_STEPS} training steps)"
    )
    if not same:
        row.skipped = f"losses differ by {loss_diff:.1e} > {LOSS_TOLERANCE:g}"
    return row


def main(argv: Sequence[str] | None = None) -> None:
    """Each job's training steps in this (fresh) process, one after the other; prints
    ``{"peak_mb": [...]}``, the peak RSS after each job (meaningful for the first job alone)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.reference")
    parser.add_argument("--jobs", nargs="+", required=True, help="recipe:model, e.g. gcn:graphbench gcn:reference")
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--work-dir", type=Path, required=True)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    ctx = Context(data_dir=args.data_dir, cache_dir=args.cache_dir, work_dir=args.work_dir, quick=args.quick)
    recipes = {recipe.name: recipe for recipe in RECIPES}
    peaks = []
    for job in args.jobs:
        name, _, model_name = job.partition(":")
        if name not in recipes or model_name not in MODELS:
            parser.error(f"--jobs {job}: expected recipe:model with recipe in {sorted(recipes)} and model in {list(MODELS)}")
        setup = prepare(ctx, recipes[name], args.steps)
        model = setup.graphbench if model_name == "graphbench" else setup.reference
        batches = setup.batches
        del setup  # and with it the other network
        train_steps(model, batches)
        peaks.append(peak_rss_mb())
        del model, batches
    print(json.dumps({"peak_mb": peaks}))


if __name__ == "__main__":
    main()
