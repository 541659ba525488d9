"""``make_activation``: a fresh activation module by name; an unknown name lists the valid ones."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from graphbench.modules.activations import make_activation


def test_names_give_their_modules_with_exact_values() -> None:
    x = torch.tensor([-2.0, 0.0, 3.0])
    assert torch.equal(make_activation("relu")(x), torch.tensor([0.0, 0.0, 3.0]))
    assert torch.equal(make_activation("leaky_relu")(x), torch.tensor([-0.02, 0.0, 3.0]))
    assert torch.allclose(make_activation("tanh")(x), torch.tanh(x))
    assert isinstance(make_activation("gelu"), nn.GELU) and isinstance(make_activation("silu"), nn.SiLU)


def test_every_call_builds_a_new_module() -> None:
    first, second = make_activation("prelu"), make_activation("prelu")
    assert first is not second and first.weight is not second.weight  # PReLU's slope is learned per use


def test_unknown_name_lists_the_valid_ones() -> None:
    with pytest.raises(ValueError, match=r"^unknown activation 'swish'; valid: \['elu', 'gelu', 'leaky_relu', 'prelu'"):
        make_activation("swish")
