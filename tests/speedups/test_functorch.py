"""``transformed``: whether a tensor is wrapped by a ``torch.func`` transform."""

from __future__ import annotations

import torch

from graphbench.speedups.functorch import transformed


def test_a_plain_tensor_is_not_transformed_and_one_inside_vmap_and_vjp_is() -> None:
    seen: list[bool] = []

    def record(x: torch.Tensor) -> torch.Tensor:
        seen.append(transformed(x))
        return x * 2

    assert transformed(torch.ones(3)) is False
    torch.func.vmap(record)(torch.ones(4, 3))
    torch.func.vjp(record, torch.ones(3))
    assert seen == [True, True]


def test_an_unbatched_tensor_met_inside_vmap_counts_as_transformed() -> None:
    fixed = torch.ones(3)
    seen: list[bool] = []

    def record(w: torch.Tensor) -> torch.Tensor:
        seen.append(transformed(fixed))
        return w * fixed

    torch.func.vmap(record)(torch.ones(4, 3))
    assert seen == [True] and transformed(fixed) is False
