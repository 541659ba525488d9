"""RNGState: the Python, NumPy and torch generator states saved in a checkpoint and restored from it, so
that the draws after a resume are those the uninterrupted run made."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import torch

from graphbench.callbacks.rng_state import RNGState


def draws() -> tuple[list[float], list[float], list[float], list[float]]:
    """A few draws from each global generator; NumPy's normals in an odd number, so that its state
    holds a cached Gaussian (``has_gauss``), which must be restored too."""
    return (
        [random.random() for _ in range(3)],
        np.random.normal(size=3).tolist(),
        np.random.randint(0, 2**31, size=3).tolist(),
        torch.rand(3).tolist(),
    )


def test_the_draws_after_a_restore_from_a_checkpoint_file_are_those_after_the_save(tmp_path: Path) -> None:
    random.seed(1)
    np.random.seed(2)
    torch.manual_seed(3)
    np.random.normal()  # one Gaussian of a pair drawn: the other is cached in the state saved below
    callback = RNGState()
    state = callback.state_dict()
    assert state["numpy"]["has_gauss"] == 1
    # Lightning loads checkpoints with weights_only=True: the state must survive that
    torch.save({"callbacks": {"RNGState": state}}, tmp_path / "last.ckpt")
    expected = draws()

    random.seed(10)
    np.random.seed(20)
    torch.manual_seed(30)
    assert draws() != expected  # other seeds draw otherwise, so the comparison below can fail

    restored = torch.load(tmp_path / "last.ckpt", weights_only=True)["callbacks"]["RNGState"]
    RNGState().load_state_dict(restored)
    assert draws() == expected


def test_saving_the_state_draws_nothing() -> None:
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    RNGState().state_dict()
    after_save = draws()
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    assert draws() == after_save
