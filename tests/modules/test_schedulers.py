"""The learning-rate schedules: linear warm-up then cosine decay, and reduce-on-plateau with its stop threshold."""

from __future__ import annotations

import math

import pytest
import torch

from graphbench.modules.schedulers import cosine_with_warmup, plateau


def test_cosine_with_warmup_values() -> None:
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    sched = cosine_with_warmup(opt, monitor="val/ap", mode="max", warmup_epochs=2, max_epochs=6).lightning_config["scheduler"]
    lrs = []
    for _ in range(6):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    expected = [1e-6, 0.5, 1.0, 0.5 * (1 + math.cos(math.pi / 4)), 0.5, 0.5 * (1 + math.cos(3 * math.pi / 4))]
    assert lrs == pytest.approx(expected)


def test_cosine_with_warmup_matches_the_lrgb_code_at_epochs_0_and_5() -> None:
    """toenshoff/LRGB's ``cosine_with_warmup`` with ``num_warmup_epochs: 5``: epoch 0 runs at
    ``base_lr * 1e-6``, epoch 5 at the base rate."""
    opt = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=1e-3)
    sched = cosine_with_warmup(opt, monitor="val/ap", mode="max", warmup_epochs=5, max_epochs=250).lightning_config["scheduler"]
    lrs = []
    for _ in range(6):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs[0] == pytest.approx(1e-9, rel=1e-12) and lrs[5] == pytest.approx(1e-3, rel=1e-12)
    assert lrs[1:5] == pytest.approx([2e-4, 4e-4, 6e-4, 8e-4])


def test_plateau_halves_and_reports_stop_threshold() -> None:
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    spec = plateau(opt, monitor="val/mae", mode="min", factor=0.5, patience=1, min_lr=0.3)
    sched = spec.lightning_config["scheduler"]
    assert spec.lightning_config["monitor"] == "val/mae" and spec.stop_below_lr == 0.3
    for value in (1.0, 1.0, 1.0, 1.0, 1.0):
        sched.step(value)
    assert opt.param_groups[0]["lr"] == 0.25
