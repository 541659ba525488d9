"""Positional encodings over a whole dataset: graphbench's batched ``precompute`` with ``LapPE`` /
``RWSE`` against PyG's ``AddLaplacianEigenvectorPE`` / ``AddRandomWalkPE`` applied graph by graph."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable

import torch
from torch_geometric.data import Data
from torch_geometric.transforms import AddLaplacianEigenvectorPE, AddRandomWalkPE, BaseTransform

from benchmarks.common import QUICK_CYCLES, Context, Row, Target, compose_config, fmt_s, interleaved, median, paired_ratio, timed
from benchmarks.peptides import RAW, datamodule, graph_list
from graphbench.train import build_datamodule

TARGET = Target(">=", 3.0)


@dataclass(frozen=True)
class Encoding:
    case: str
    ours: Callable[[], BaseTransform]
    pyg: Callable[[], BaseTransform]
    attrs: tuple[str, str]  # (graphbench's attribute, PyG's attribute)
    min_nodes: int = 0  # PyG's transform fails on smaller graphs

    def accepts(self, graph: Data) -> bool:
        return int(graph.num_nodes or 0) >= self.min_nodes


def encodings() -> list[Encoding]:
    from graphbench.transforms.lap_pe import LapPE
    from graphbench.transforms.rwse import RWSE

    return [
        Encoding("LapPE k=10", lambda: LapPE(k=10), lambda: AddLaplacianEigenvectorPE(k=10, attr_name="pyg_pe", is_undirected=True), ("lap_pe", "pyg_pe"), 11),
        Encoding("RWSE 20 steps", lambda: RWSE(k=20), lambda: AddRandomWalkPE(walk_length=20, attr_name="pyg_pe"), ("rwse", "pyg_pe")),
    ]


def dataset_graphs(ctx: Context) -> tuple[str, list[Data]]:
    """Every Peptides-func graph (full runs), or the graphs of the small generated cycles dataset (quick)."""
    if ctx.quick:
        dm = build_datamodule(compose_config(ctx, QUICK_CYCLES, ctx.work_dir / "pe"))
        dm.setup("fit")
        assert dm.dataset is not None
        return f"cycles, {len(dm.dataset)} graphs (quick)", graph_list(dm.dataset)
    dm = datamodule(ctx, None)
    dm.setup("fit")
    assert dm.dataset is not None
    return f"Peptides-func, all {len(dm.dataset):,} graphs", graph_list(dm.dataset)


def per_graph(transform: BaseTransform, graphs: list[Data]) -> list[Data]:
    return [transform(copy.copy(g)) for g in graphs]


def run(ctx: Context) -> list[Row]:
    try:
        encs = encodings()
    except ImportError as exc:
        return [Row("pe: precompute", "LapPE k=10 / RWSE 20 steps", skipped=f"graphbench.transforms not importable ({exc})")]
    if not ctx.quick and not ctx.has_raw(RAW):
        return [Row("pe: precompute", e.case, skipped=f"no raw files at {ctx.data_dir / RAW}") for e in encs]
    label, all_graphs = dataset_graphs(ctx)
    from graphbench.transforms.precompute import precompute

    rows = []
    for enc in encs:
        out: dict[str, list[Data]] = {}
        graphs = [g for g in all_graphs if enc.accepts(g)]

        def ours() -> float:
            seconds, out["ours"] = timed(lambda: precompute(graphs, enc.ours()))
            return seconds

        def pyg() -> float:
            seconds, out["pyg"] = timed(lambda: per_graph(enc.pyg(), graphs))
            return seconds

        times = interleaved({"graphbench": ours, "pyg": pyg}, ctx.repeats)
        row = Row("pe: precompute", f"{enc.case}, {label}", target=TARGET)
        left_out = len(all_graphs) - len(graphs)
        if left_out:
            row.case += f" ({left_out} with < {enc.min_nodes} nodes left out: PyG's transform fails on them)"
        row.graphbench = fmt_s(median(times["graphbench"])) + f" (torch threads: {torch.get_num_threads()})"
        row.reference = fmt_s(median(times["pyg"])) + f" (PyG {type(enc.pyg()).__name__}, per graph)"
        row.figure = paired_ratio(times["pyg"], times["graphbench"])
        row.note = f"speed-up (median paired ratio), interleaved rounds: {ctx.repeats}; {agreement(enc, out['ours'], out['pyg'])}"
        rows.append(row)
    return rows


def agreement(enc: Encoding, ours: list[Data], pyg: list[Data]) -> str:
    """How far graphbench's encodings are from PyG's. LapPE: entries compared in absolute value (an
    eigenvector is defined up to sign), only for eigenvalues separated from their neighbours (a
    repeated eigenvalue's eigenvectors are any basis of its eigenspace)."""
    mine, theirs = enc.attrs
    worst, compared = 0.0, 0
    for a, b in zip(ours, pyg):
        x, y = a[mine], b[theirs]
        cols = list(range(min(x.size(-1), y.size(-1))))
        if mine == "lap_pe":
            vals = a["lap_eigval"][0]
            gaps = torch.cat([vals.new_zeros(1), vals, vals.new_full((1,), float("nan"))]).diff().abs()
            cols = [j for j in cols[:-1] if gaps[j] > 1e-3 and gaps[j + 1] > 1e-3]
            x, y = x.abs(), y.abs()
        if cols and x.size(0):
            worst = max(worst, float((x[:, cols] - y[:, cols]).abs().max()))
            compared += 1
    return f"max |difference| to PyG {worst:.1e} over {compared:,} graphs" + (" (non-degenerate eigenvectors, up to sign)" if mine == "lap_pe" else "")
