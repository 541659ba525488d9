"""Samplers at scale: on ``sbm-large`` with 1M nodes / 10M edges and 2M nodes / 20M edges, per
sampler, training batches per second, seed (labelled training) nodes per second and the peak RSS,
against the peak RSS of one full-batch training step; the data wait with ``num_workers=2``.

Every configuration runs in its own fresh process (``python -m benchmarks.samplers <json list>``), which
builds the DataModule from the composed config (the dataset generated and cached beforehand), a
2-layer GCN (hidden 64) and Adam, and times ``steps`` training steps after ``warmup`` ones. Its peak
RSS is ``VmHWM``. Two baselines are read: the RSS once the DataModule is set up (the graph, its
features and splits) and the RSS once the training loader is built as well (the sampler's index of
the graph, built once: PyG's CSC copy of ``edge_index``, the METIS permutation, GraphSAINT's
pre-sampled counts, all O(E)). ``VmHWM`` is then reset (``/proc/self/clear_refs``), so the peak is
that of the training steps alone; "beyond the graph" is that peak minus the second baseline: what
training at a fixed batch size adds. The memory target: the second size's addition within 1.3x of
the first's. The data wait is the time blocked on the loader over the time of a whole step. A quick
run (``--quick``, a smoke test of the harness) measures all its configurations in one fresh process.

``GRAPHBENCH_BENCH_SAMPLERS`` (comma-separated, e.g. ``neighbor,saint_rw``) measures those samplers
only (default: all five), for a partial run where the whole one does not fit the time at hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.common import REPO, Context, Row, Target, chosen_from_env, compose_config

SAMPLERS: tuple[str, ...] = ("neighbor", "cluster_gcn", "saint_node", "saint_edge", "saint_rw")
#: fixed batch sizes at every graph size (samplers' own defaults otherwise), pre-sampling capped
SAMPLER_OVERRIDES: dict[str, list[str]] = {
    "full": [],
    "neighbor": ["sampler.batch_size=1024", "sampler.num_neighbors=[10,10]"],
    "cluster_gcn": ["sampler.parts_per_batch=4"],  # num_parts: parts of ~5,000 nodes (overrides_for)
    "saint_node": ["sampler.budget=20000", "sampler.presample_steps=20"],
    "saint_edge": ["sampler.budget=10000", "sampler.presample_steps=20"],
    "saint_rw": ["sampler.budget=5000", "sampler.walk_length=2", "sampler.presample_steps=20"],
}
MEMORY = Target("<=", 1.3, "x")
WAIT = Target("<", 20.0, "%")


def overrides_for(sampler: str, num_nodes: int, num_workers: int) -> list[str]:
    extra = list(SAMPLER_OVERRIDES[sampler])
    if sampler == "cluster_gcn":
        extra.append(f"sampler.num_parts={max(2, num_nodes // 5000)}")  # batches of 4 parts: ~20,000 nodes
    return [
        "dataset=sbm-large",
        f"dataset.num_nodes={num_nodes}",
        f"dataset.num_workers={num_workers}",
        f"sampler={sampler}",
        "model=gcn",
        "model.num_layers=2",
        "model.hidden_dim=64",
        *extra,
    ]


def measure(args: dict[str, Any]) -> dict[str, Any]:
    """In the fresh process: time ``args['steps']`` training steps; the figures as a dict."""
    import lightning as L
    import torch

    from graphbench.build.data import build_datamodule
    from graphbench.build.model import network_builder
    from graphbench.callbacks.resources import peak_rss_mb

    ctx = Context(Path(args["data_dir"]), Path(args["cache_dir"]), Path(args["work_dir"]))
    cfg = compose_config(ctx, args["overrides"], Path(args["work_dir"]) / "run")
    L.seed_everything(0, verbose=False)
    datamodule = build_datamodule(cfg)
    datamodule.setup("fit")
    rss_graph = _rss_mb()
    network = network_builder(cfg, datamodule.info)(int(cfg.model.hidden_dim))
    optimizer = torch.optim.Adam(network.parameters(), lr=0.01)
    loader = datamodule.train_dataloader()
    rss_setup = _rss_mb()
    _reset_peak_rss()
    wait = compute = 0.0
    batches = seeds = 0
    iterator = iter(loader)
    for step in range(args["warmup"] + args["steps"]):
        start = time.perf_counter()
        try:
            batch = next(iterator)
        except StopIteration:
            iterator = iter(loader)
            batch = next(iterator)
        waited = time.perf_counter() - start
        mask = batch.train_mask
        logits = network(batch)
        if "loss_weight" in batch:
            losses = torch.nn.functional.cross_entropy(logits[mask], batch.y[mask], reduction="none")
            loss = (batch.loss_weight[mask] * losses).sum()
        else:
            loss = torch.nn.functional.cross_entropy(logits[mask], batch.y[mask])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step >= args["warmup"]:
            wait += waited
            compute += time.perf_counter() - start - waited
            batches += 1
            seeds += int(mask.sum())
    total = wait + compute
    return {
        "batches_per_s": batches / total,
        "seeds_per_s": seeds / total,
        "wait_share": 100 * wait / total,
        "step_s": total / batches,
        "peak_mb": peak_rss_mb(),
        "graph_mb": rss_graph,
        "setup_mb": rss_setup,
        "nodes_per_batch": batch.num_nodes,
    }


def _reset_peak_rss() -> None:
    """Set ``VmHWM`` to the current RSS (Linux >= 4.0; elsewhere the peak keeps counting the set-up)."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        pass


def _rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def run_fresh(ctx: Context, configs: list[list[str]], steps: int, warmup: int) -> list[dict[str, Any]]:
    """The figures of every configuration (overrides), each measured in a fresh process; in a quick run
    (a smoke test, figures meaningless) all of them in one fresh process, which saves a process start
    and an import of torch, Lightning and PyG per configuration."""
    if not ctx.quick:
        return [result for config in configs for result in _measure_in_process(ctx, [config], steps, warmup)]
    return _measure_in_process(ctx, configs, steps, warmup)


def _measure_in_process(ctx: Context, configs: list[list[str]], steps: int, warmup: int) -> list[dict[str, Any]]:
    jobs = [
        {
            "data_dir": str(ctx.data_dir),
            "cache_dir": str(ctx.cache_dir),
            "work_dir": str(ctx.work_dir / "samplers"),
            "overrides": overrides,
            "steps": steps,
            "warmup": warmup,
        }
        for overrides in configs
    ]
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.samplers", json.dumps(jobs)], cwd=REPO, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"benchmarks.samplers {configs} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def chosen_samplers() -> tuple[str, ...]:
    """``GRAPHBENCH_BENCH_SAMPLERS`` (comma-separated) or every sampler."""
    return chosen_from_env("GRAPHBENCH_BENCH_SAMPLERS", SAMPLERS, "sampler")


def run(ctx: Context) -> list[Row]:
    samplers = chosen_samplers()
    sizes = (2000, 4000) if ctx.quick else (1_000_000, 2_000_000)
    steps, warmup = (2, 1) if ctx.quick else (10, 2)
    rows: list[Row] = []
    added: dict[str, list[float]] = {}
    plan = [(sampler, num_nodes) for num_nodes in sizes for sampler in ("full", *samplers)]
    results = run_fresh(ctx, [overrides_for(sampler, num_nodes, 0) for sampler, num_nodes in plan], steps, warmup)
    for (sampler, num_nodes), result in zip(plan, results):
        label = f"sbm-large {num_nodes:,} nodes / {10 * num_nodes:,} edges"
        extra = result["peak_mb"] - result["setup_mb"]
        index = result["setup_mb"] - result["graph_mb"]
        added.setdefault(sampler, []).append(extra)
        if sampler == "full":
            rows.append(
                Row(
                    "samplers: full-batch step",
                    label,
                    graphbench=f"{result['step_s']:.2f} s/step, peak {result['peak_mb']:.0f} MiB",
                    note=f"one training step on the whole graph; {extra:.0f} MiB beyond the set-up graph ({result['graph_mb']:.0f} MiB)",
                )
            )
            continue
        rows.append(
            Row(
                f"samplers: {sampler}",
                label,
                graphbench=(
                    f"{result['batches_per_s']:.2f} batches/s, {result['seeds_per_s']:,.0f} seed nodes/s, "
                    f"peak {result['peak_mb']:.0f} MiB"
                ),
                note=(
                    f"{extra:.0f} MiB beyond the set-up graph ({result['graph_mb']:.0f} MiB) and the sampler's "
                    f"index ({index:.0f} MiB); "
                    f"~{result['nodes_per_batch']:,} nodes a batch; num_workers=0; {' '.join(overrides_for(sampler, num_nodes, 0)[3:])}"
                ),
            )
        )
    for sampler in samplers:
        first, second = added[sampler]
        rows.append(
            Row(
                f"samplers: {sampler} memory growth",
                f"{sizes[1]:,} vs {sizes[0]:,} nodes, fixed batch size",
                graphbench=f"{second:.0f} vs {first:.0f} MiB beyond the graph and the sampler's index",
                figure=second / max(first, 1.0),
                target=MEMORY,
            )
        )
    waits = run_fresh(ctx, [overrides_for(sampler, sizes[0], 2) for sampler in samplers], steps, warmup)
    for sampler, result in zip(samplers, waits):
        rows.append(
            Row(
                f"samplers: {sampler} data wait",
                f"sbm-large {sizes[0]:,} nodes, num_workers=2",
                graphbench=f"{1000 * result['wait_share'] * result['step_s'] / 100:.0f} ms waiting of {1000 * result['step_s']:.0f} ms per step",
                figure=result["wait_share"],
                target=WAIT,
            )
        )
    return rows


if __name__ == "__main__":
    print(json.dumps([measure(job) for job in json.loads(sys.argv[1])]))
