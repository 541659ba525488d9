"""Preprocessing: Peptides-func raw csv -> processed dataset with graphbench
(``PeptidesFuncDataModule.build()``: bulk column-wise featurization on every core) against the
LRGB loader's serial ``smiles2graph`` + one ``Data`` per graph + collate; then reloading the cache."""

from __future__ import annotations

import os
from typing import Any

import torch

from benchmarks.common import Context, Row, Target, fmt_s, interleaved, median, paired_ratio, timed
from benchmarks.peptides import CSV, RAW, datamodule, reference_process

SPEEDUP = Target(">=", 2.0)
RELOAD = Target("<=", 2.0, " s")
QUICK_LIMIT = 16


def identical(reference: tuple[Any, Any], ours: tuple[Any, Any]) -> bool:
    """Every tensor and every slice of the two collated datasets is equal."""
    (ref, ref_slices), (store, _splits) = reference, ours
    data, slices = store.collated, store.slices
    tensors = all(torch.equal(ref[k], data[k]) for k in ("x", "edge_index", "edge_attr", "y"))
    return tensors and all(torch.equal(ref_slices[k], slices[k]) for k in ("x", "edge_index", "edge_attr", "y"))


def run(ctx: Context) -> list[Row]:
    build = Row(
        "preprocess: raw csv -> dataset",
        "Peptides-func" + (f", first {QUICK_LIMIT} (quick)" if ctx.quick else ""),
        target=SPEEDUP,
    )
    reload = Row("preprocess: reload cache", build.case, target=RELOAD)
    if not ctx.has_raw(RAW):
        build.skipped = reload.skipped = f"no raw files at {ctx.data_dir / RAW}"
        return [build, reload]
    limit = QUICK_LIMIT if ctx.quick else None
    out: dict[str, Any] = {}

    def graphbench() -> float:
        dm = datamodule(ctx, limit)
        seconds, out["graphbench"] = timed(lambda: dm.source.build(dm.raw))
        return seconds

    def reference() -> float:
        seconds, out["reference"] = timed(lambda: reference_process(ctx.data_dir / CSV, limit))
        return seconds

    times = interleaved({"graphbench": graphbench, "reference": reference}, ctx.repeats)
    same = identical(out["reference"], out["graphbench"])
    workers = len(os.sched_getaffinity(0))
    build.graphbench = fmt_s(median(times["graphbench"])) + f" ({workers} processes)"
    build.reference = fmt_s(median(times["reference"])) + " (LRGB loader: serial smiles2graph)"
    build.figure = paired_ratio(times["reference"], times["graphbench"])
    build.note = f"speed-up (median paired ratio), interleaved rounds: {ctx.repeats}; graphs identical: {'yes' if same else 'NO'}"
    if not same:
        build.skipped = "graphbench's graphs differ from the reference's"

    datamodule(ctx, limit).prepare_data()  # write the cache (not timed)
    seconds = [timed(lambda: datamodule(ctx, limit).setup("fit"))[0] for _ in range(ctx.repeats)]
    reload.graphbench = fmt_s(median(seconds))
    reload.figure = median(seconds)
    reload.note = f"absolute: fresh DataModule.setup() with the cache present (raw MD5 check included), median of {ctx.repeats}"
    return [build, reload]
