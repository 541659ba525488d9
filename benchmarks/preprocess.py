"""Preprocessing: Peptides-func raw csv -> processed dataset with graphbench
(``PeptidesFuncDataModule.build()``: bulk column-wise featurization on every core) against the
LRGB loader's serial ``smiles2graph`` + one ``Data`` per graph + collate, and against the floor (RDKit's
``MolFromSmiles`` alone, same processes); then reloading the cache."""

from __future__ import annotations

from typing import Any

import torch

from benchmarks.common import Context, Row, Target, fmt_s, interleaved, median, paired_ratio, timed
from benchmarks.peptides import CSV, RAW, datamodule, reference_process
from graphbench.data.sources.graph.peptides import read_peptides_csv
from graphbench.data.sources.molecules import featurize_smiles
from graphbench.run.processes import map_chunks, usable_cores

SPEEDUP = Target(">=", 2.0)
RELOAD = Target("<=", 2.0, " s")
#: graphbench's raw csv -> dataset time over the floor's
FLOOR = Target("<=", 1.5)
QUICK_LIMIT = 16


def identical(reference: tuple[Any, Any], ours: tuple[Any, Any]) -> bool:
    """Every tensor and every slice of the two collated datasets is equal."""
    (ref, ref_slices), (store, _splits) = reference, ours
    data, slices = store.collated, store.slices
    tensors = all(torch.equal(ref[k], data[k]) for k in ("x", "edge_index", "edge_attr", "y"))
    return tensors and all(torch.equal(ref_slices[k], slices[k]) for k in ("x", "edge_index", "edge_attr", "y"))


def _parse_chunk(smiles: list[str]) -> int:
    from rdkit import Chem

    return sum(Chem.MolFromSmiles(s) is not None for s in smiles)


def rdkit_floor(smiles: list[str], workers: int) -> int:
    """The floor of any SMILES featurization: RDKit's ``MolFromSmiles`` alone on every SMILES, in
    chunks over ``workers`` forked processes as graphbench's ``featurize_smiles`` splits them.
    Returns how many parsed."""
    size = max(1, -(-len(smiles) // (workers * 4)))
    chunks = [smiles[i : i + size] for i in range(0, len(smiles), size)]
    return sum(map_chunks(_parse_chunk, chunks, workers))


def run(ctx: Context) -> list[Row]:
    build = Row(
        "preprocess: raw csv -> dataset",
        "Peptides-func" + (f", first {QUICK_LIMIT} (quick)" if ctx.quick else ""),
        target=SPEEDUP,
    )
    floor = Row("preprocess: floor (RDKit MolFromSmiles alone)", build.case, target=FLOOR)
    reload = Row("preprocess: reload cache", build.case, target=RELOAD)
    if not ctx.has_raw(RAW):
        build.skipped = floor.skipped = reload.skipped = f"no raw files at {ctx.data_dir / RAW}"
        return [build, floor, reload]
    limit = QUICK_LIMIT if ctx.quick else None
    out: dict[str, Any] = {}

    def graphbench() -> float:
        dm = datamodule(ctx, limit)
        seconds, out["graphbench"] = timed(lambda: dm.source.build(dm.raw))
        return seconds

    def reference() -> float:
        seconds, out["reference"] = timed(lambda: reference_process(ctx.data_dir / CSV, limit))
        return seconds

    workers = usable_cores()
    smiles = read_peptides_csv(ctx.data_dir / CSV, "labels")[0][:limit]

    def parse_only() -> float:
        seconds, out["floor"] = timed(lambda: rdkit_floor(smiles, workers))
        return seconds

    # untimed warm-up: graphbench's compiled pickle reader compiles once per installation (cached
    # on disk afterwards), which is not a per-dataset cost
    featurize_smiles(smiles[:8], torch.zeros(len(smiles[:8]), 1), 1)
    times = interleaved({"graphbench": graphbench, "reference": reference, "floor": parse_only}, ctx.repeats)
    same = identical(out["reference"], out["graphbench"])
    build.graphbench = fmt_s(median(times["graphbench"])) + f" ({workers} processes)"
    build.reference = fmt_s(median(times["reference"])) + " (LRGB loader: serial smiles2graph)"
    build.figure = paired_ratio(times["reference"], times["graphbench"])
    build.note = (
        f"speed-up (median paired ratio), interleaved rounds: {ctx.repeats} after an untimed warm-up on 8 molecules; "
        f"graphs identical: {'yes' if same else 'NO'}"
    )
    if not same:
        build.skipped = "graphbench's graphs differ from the reference's"
    floor.graphbench = build.graphbench
    floor.reference = fmt_s(median(times["floor"])) + f" ({workers} processes, {out['floor']:,} molecules parsed, nothing else)"
    floor.figure = paired_ratio(times["graphbench"], times["floor"])
    floor.note = (
        "graphbench's raw csv -> dataset time over the floor's (median paired ratio, interleaved with the row above); "
        "the floor's SMILES are read from the csv beforehand, untimed"
    )

    datamodule(ctx, limit).prepare_data()  # write the cache (not timed)
    seconds = [timed(lambda: datamodule(ctx, limit).setup("fit"))[0] for _ in range(ctx.repeats)]
    reload.graphbench = fmt_s(median(seconds))
    reload.figure = median(seconds)
    reload.note = f"absolute: fresh DataModule.setup() with the cache present (raw MD5 check included), median of {ctx.repeats}"
    return [build, floor, reload]
