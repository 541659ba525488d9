"""``transformed``: whether a tensor is wrapped by a ``torch.func`` transform; ``only_vmapped``: whether every
active transform is a ``vmap``."""

from __future__ import annotations

import torch

from graphbench.speedups.functorch import only_vmapped, transformed


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


def test_only_vmapped_inside_vmaps_alone_not_under_a_gradient_transform_nor_outside() -> None:
    seen: list[bool] = []

    def record(x: torch.Tensor) -> torch.Tensor:
        seen.append(only_vmapped())
        return x * 2

    assert only_vmapped() is False
    torch.func.vmap(record)(torch.ones(4, 3))
    torch.func.vmap(torch.func.vmap(record))(torch.ones(2, 4, 3))
    torch.func.vjp(record, torch.ones(3))
    torch.func.vmap(lambda v: torch.func.vjp(record, torch.ones(3))[1](v))(torch.ones(4, 3))
    assert seen == [True, True, False, False]
