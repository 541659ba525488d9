"""The ``dispatch`` benchmark: its tiny batch, and ``python -m benchmarks --only dispatch --quick`` through the
runner (no timing is asserted: figures from a smoke run mean nothing)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from benchmarks.dispatch import padded, tiny_batch
from graphbench.transforms.rwse import RWSE
from tests.paths import REPO, SHARED_DATA


def test_tiny_batch_holds_four_molecules_with_their_rwse() -> None:
    batch = tiny_batch(RWSE(k=4), num_outputs=10)
    # acetic acid, benzene, ethylamine, glycerol: heavy atoms and bonds (each bond two directed edges)
    assert batch.num_graphs == 4 and batch.batch.bincount().tolist() == [4, 6, 3, 6]
    assert batch.num_edges == 2 * (3 + 6 + 2 + 5)
    assert batch.x.shape == (19, 9) and batch.edge_attr.shape == (32, 3)
    assert batch.y.shape == (4, 10) and set(batch.y.unique().tolist()) <= {0.0, 1.0}
    # benzene is a 6-cycle: a walk returns after t steps with probability 0, 1/2, 0, 3/8
    benzene = batch.rwse[batch.batch == 1]
    assert torch.allclose(benzene, torch.tensor([0.0, 0.5, 0.0, 0.375]).expand(6, 4))


def test_the_bucketed_contender_trains_on_the_tiny_batch_padded_to_multiples_of_eight() -> None:
    batch = tiny_batch(RWSE(k=4), num_outputs=10)
    bucketed = padded(batch)
    assert bucketed.num_nodes == 24 and bucketed.num_edges == 32 and bucketed.num_graphs == 5
    assert int(bucketed.node_mask.sum()) == 19 and bool(bucketed.edge_mask.all())
    assert torch.equal(bucketed.y, batch.y) and bucketed.num_real_graphs == 4


@pytest.mark.slow  # compiles the GCN twice: a minute on 2 cores
def test_quick_run_prints_the_gcn_row(tmp_path: Path) -> None:
    env = {**os.environ, "WANDB_MODE": "offline", "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "benchmarks", "--only", "dispatch", "--quick", "--threads", "1"]
    command += ["--data-dir", str(SHARED_DATA), "--cache-dir", str(tmp_path / "cache")]
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line.strip("|").split(" | ") for line in done.stdout.splitlines() if line.startswith("| dispatch")]
    assert len(rows) == 1, done.stdout  # the final table (each group's own goes to stderr)
    benchmark, case, graphbench, reference, _, target, verdict, note = (cell.strip() for cell in rows[-1])
    assert (benchmark, case, target) == (
        "dispatch: training steps / s",
        "LRGB-tuned GCN, 4 tiny molecules (19 atoms), 1 thread",
        ">= 2.00x",
    )
    assert verdict == "met" or verdict.startswith("missed: "), verdict  # the compiled network trained
    assert graphbench.startswith("eager: ") and "; compiled: " in graphbench and graphbench.endswith(" aten ops/step")
    assert "; compiled with buckets: " in graphbench and "failed" not in graphbench
    assert reference.startswith("reference: ") and reference.endswith(" aten ops/step (plain PyG)")
    assert "width 235, 485,741 params" in note  # toenshoff/LRGB's Peptides-func GCN, its unused edge encoder included
