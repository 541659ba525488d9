"""Activation functions by name, so that configs and sweeps can say ``model.activation=gelu``."""

from __future__ import annotations

from torch import nn

ACTIVATIONS: dict[str, type[nn.Module]] = {
    "relu": nn.ReLU,
    "gelu": nn.GELU,
    "elu": nn.ELU,
    "leaky_relu": nn.LeakyReLU,
    "prelu": nn.PReLU,
    "tanh": nn.Tanh,
    "silu": nn.SiLU,
}


def make_activation(name: str) -> nn.Module:
    try:
        return ACTIVATIONS[name]()
    except KeyError:
        raise ValueError(f"unknown activation {name!r}; valid: {sorted(ACTIVATIONS)}") from None
