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
    expected = [1 / 3, 2 / 3, 1.0, 0.5 * (1 + math.cos(math.pi / 4)), 0.5, 0.5 * (1 + math.cos(3 * math.pi / 4))]
    assert lrs == pytest.approx(expected)


def test_plateau_halves_and_reports_stop_threshold() -> None:
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    spec = plateau(opt, monitor="val/mae", mode="min", factor=0.5, patience=1, min_lr=0.3)
    sched = spec.lightning_config["scheduler"]
    assert spec.lightning_config["monitor"] == "val/mae" and spec.stop_below_lr == 0.3
    for value in (1.0, 1.0, 1.0, 1.0, 1.0):
        sched.step(value)
    assert opt.param_groups[0]["lr"] == 0.25
