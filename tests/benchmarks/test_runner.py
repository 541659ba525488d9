"""``python -m benchmarks --quick`` runs every benchmark on tiny inputs and prints the whole table.
No timing is asserted: figures from a smoke run mean nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.paths import REPO, SHARED_DATA

#: (benchmark column, case prefix) of every row the quick table must contain
EXPECTED_ROWS = [
    ("reference: time / training epoch", "LRGB-tuned GCN"),
    ("reference: time / training epoch", "LRGB-tuned GINE"),
    ("reference: time / training epoch", "LRGB-tuned GatedGCN"),
    ("overhead: time / training epoch", "GCN, cycles"),
    ("overhead: time / training epoch", "GatedGCN, cycles"),
    ("overhead: time / training epoch", "GCN full-batch, Cora"),
    ("dispatch: training steps / s", "LRGB-tuned GCN"),
    ("preprocess: raw csv -> dataset", "Peptides-func"),
    ("preprocess: floor (RDKit MolFromSmiles alone)", "Peptides-func"),
    ("preprocess: reload cache", "Peptides-func"),
    ("pe: precompute", "LapPE k=10"),
    ("pe: precompute", "RWSE 20 steps"),
    ("pipeline: data wait / step time", "cycles recipe"),
    ("memory: peak RSS of training", "cycles recipe"),
    ("memory: RSS growth per epoch", "cycles recipe"),
]
SAMPLERS = ("neighbor", "cluster_gcn", "saint_node", "saint_edge", "saint_rw")
for _size in ("sbm-large 2", "sbm-large 4"):  # the quick sizes: 2,000 and 4,000 nodes
    EXPECTED_ROWS += [("samplers: full-batch step", _size)] + [(f"samplers: {s}", _size) for s in SAMPLERS]
EXPECTED_ROWS += [(f"samplers: {s} memory growth", "4") for s in SAMPLERS]
EXPECTED_ROWS += [(f"samplers: {s} data wait", "sbm-large 2") for s in SAMPLERS]


def test_quick_run_prints_every_row(tmp_path: Path) -> None:
    env = {**os.environ, "WANDB_MODE": "offline", "PYTHONPATH": str(REPO)}
    command = [
        sys.executable,
        "-m",
        "benchmarks",
        "--quick",
        "--threads",
        "1",
        "--data-dir",
        str(SHARED_DATA),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--output",
        str(tmp_path / "table.md"),
    ]
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("| benchmark | case | graphbench | reference | figure | target | verdict |")
    rows = [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines[2:] if line.startswith("| ")]
    assert [(r[0], r[1].split(" (")[0].split(",")[0]) for r in rows] == [(b, c.split(",")[0]) for b, c in EXPECTED_ROWS]
    for row in rows:
        verdict = row[6]
        assert verdict in ("met", "reported") or verdict.startswith(("missed: ", "skipped: ")), row
        if row[0].startswith("overhead") and not verdict.startswith("skipped"):  # the split of an epoch and what follows it
            assert all(
                part in row[7]
                for part in (
                    "network forward",
                    "the rest",
                    "after the last step",
                    "a whole epoch takes",
                    "kept busy",
                    "Lightning alone",
                )
            ), row
    assert (tmp_path / "table.md").read_text().startswith(lines[0])
    assert "python -m benchmarks --quick" in done.stdout


def test_script_entry_point_shows_help() -> None:
    done = subprocess.run([sys.executable, "benchmarks/run.py", "--help"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "--only" in done.stdout and "--quick" in done.stdout


def test_unknown_benchmark_names_the_valid_ones() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--only", "nope"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert "unknown benchmark(s) ['nope']" in done.stderr and "overhead" in done.stderr
