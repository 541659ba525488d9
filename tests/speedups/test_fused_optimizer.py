"""graphbench.speedups.fused_optimizer: Adam and AdamW built fused, their update equal to ``foreach``'s
up to float rounding; other optimizers, a config's own ``fused``, differentiable optimizers and mixed
precision left as they are."""

from __future__ import annotations

from functools import partial

import pytest
import torch
from torch import nn

from graphbench.config.instantiate import LocatedPartial
from graphbench.speedups.fused_optimizer import fused


def _parameters() -> list[nn.Parameter]:
    torch.manual_seed(0)
    return [nn.Parameter(torch.randn(40, 30)), nn.Parameter(torch.randn(30)), nn.Parameter(torch.randn(5, 7))]


@pytest.mark.parametrize("kind", [torch.optim.Adam, torch.optim.AdamW])
def test_adam_and_adamw_are_built_fused_and_step_as_foreach_does(kind: type[torch.optim.Optimizer]) -> None:
    make = partial(kind, lr=0.01, weight_decay=0.1, foreach=True)
    made = fused(make, mixed_precision=False)
    assert made.keywords == {"lr": 0.01, "weight_decay": 0.1, "fused": True}
    params = {name: _parameters() for name in ("foreach", "fused")}
    optimizers = {"foreach": make(params["foreach"]), "fused": made(params["fused"])}
    assert optimizers["fused"].defaults["fused"] is True and optimizers["foreach"].defaults["fused"] is None
    generator = torch.Generator().manual_seed(1)
    for _ in range(20):
        grads = [torch.randn(p.shape, generator=generator) for p in params["foreach"]]
        for name, optimizer in optimizers.items():
            for p, g in zip(params[name], grads, strict=True):
                p.grad = g.clone()
            optimizer.step()
    for a, b in zip(params["fused"], params["foreach"], strict=True):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)
    assert all(not torch.equal(a, b) for a, b in zip(params["fused"], _parameters(), strict=True))  # the steps moved them


def test_a_located_partial_keeps_its_class_and_config_path() -> None:
    make = LocatedPartial(torch.optim.AdamW, lr=0.1)
    make.path, make.keys = "optimizer", frozenset({"lr"})
    made = fused(make, mixed_precision=False)
    assert type(made) is LocatedPartial and made.path == "optimizer" and made.keys == frozenset({"lr"})
    assert made.keywords == {"lr": 0.1, "fused": True}


@pytest.mark.parametrize(
    ("make", "mixed_precision"),
    [
        (partial(torch.optim.AdamW, lr=0.1), True),  # the fused kernel unscales itself: Lightning refuses clipping
        (partial(torch.optim.SGD, lr=0.1), False),
        (partial(torch.optim.Adam, lr=0.1, fused=False), False),
        (partial(torch.optim.Adam, lr=0.1, differentiable=True), False),
    ],
)
def test_left_as_it_is(make: partial, mixed_precision: bool) -> None:
    assert fused(make, mixed_precision) is make
