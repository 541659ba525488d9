"""The overhead group's per-step row: graphbench's Trainer, the hand loop and Lightning alone train the
same network on the dispatch group's tiny batch. Structure only: no time is asserted."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from benchmarks.common import Context
from benchmarks.dispatch import SMILES
from benchmarks.overhead import KINDS, QUICK_STEPS_PER_EPOCH, STEP_TARGET, chosen_kinds, tiny_loader, tiny_step_row


def test_the_tiny_loader_serves_the_batch_itself_every_step() -> None:
    batch = torch.arange(3)
    assert [b is batch for b in tiny_loader(batch, 4)] == [True] * 4  # type: ignore[arg-type]


def test_quick_row_compares_the_trainer_step_with_the_hand_loop(tmp_path: Path) -> None:
    threads = torch.get_num_threads()
    ctx = Context(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", work_dir=tmp_path, quick=True, repeats=1)
    row = tiny_step_row(ctx)
    assert torch.get_num_threads() == threads  # the row's one thread is given back
    assert row.benchmark == "overhead: time / training step" and row.target == STEP_TARGET
    assert row.case.startswith(f"LRGB-tuned GCN, {len(SMILES)} tiny molecules a step ({QUICK_STEPS_PER_EPOCH} steps an epoch)")
    assert row.graphbench.endswith(" ms") or row.graphbench.endswith(" s")
    assert row.reference.endswith(" (hand-written loop)")
    assert row.figure is not None and row.figure > 0 and not row.skipped
    assert row.verdict == "met" or row.verdict.startswith("missed: ")
    assert "485,741 params" in row.note  # the three contenders built one model: toenshoff/LRGB's GCN
    assert "Lightning alone" in row.note and "forward and backward passes" in row.note


def test_the_environment_picks_the_kinds_of_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRAPHBENCH_BENCH_OVERHEAD", raising=False)
    assert chosen_kinds() == KINDS == ("epoch", "step")
    monkeypatch.setenv("GRAPHBENCH_BENCH_OVERHEAD", "step")
    assert chosen_kinds() == ("step",)
    monkeypatch.setenv("GRAPHBENCH_BENCH_OVERHEAD", "steps")
    with pytest.raises(ValueError, match="unknown row kind"):
        chosen_kinds()
