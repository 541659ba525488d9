"""Checks of the config values every run relies on, so that a wrong override ends with one message
naming the key, the value and what is valid, before anything is built."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omegaconf import DictConfig, OmegaConf

from graphbench.run.errors import ConfigError

_MISSING = object()


def _positive(value: Any) -> bool:
    return value > 0


def _non_negative(value: Any) -> bool:
    return value >= 0


def _probability(value: Any) -> bool:
    return 0 <= value < 1


def _epochs(value: Any) -> bool:
    return value >= 1 or value == -1


def _any(value: Any) -> bool:
    return True


#: key -> (accepted types, condition on the value, human-readable expectation)
CHECKED_KEYS: dict[str, tuple[tuple[type, ...], Callable[[Any], bool], str]] = {
    "seed": ((int,), _any, "an integer"),
    "checkpoint_every_s": ((int, float), _non_negative, "a non-negative number of seconds"),
    "dataset.num_workers": ((int,), _non_negative, "a non-negative integer"),
    "model.hidden_dim": ((int,), _positive, "a positive integer"),
    "model.num_layers": ((int,), _non_negative, "a non-negative integer"),
    "model.dropout": ((int, float), _probability, "a number in [0, 1)"),
    "model.residual": ((bool,), _any, "true or false"),
    "model.compile": ((bool,), _any, "true or false"),
    "speedups.enabled": ((bool,), _any, "true or false"),
    "head.num_layers": ((int,), _positive, "a positive integer"),
    "optimizer.lr": ((int, float), _positive, "a positive number"),
    "optimizer.weight_decay": ((int, float), _non_negative, "a non-negative number"),
    "budget.max_params": ((int, type(None)), lambda v: v is None or v > 0, "a positive integer or null"),
    "trainer.max_epochs": ((int,), _epochs, "an integer >= 1 (or -1: no limit)"),
    "trainer.check_val_every_n_epoch": ((int, type(None)), lambda v: v is None or v > 0, "a positive integer"),
}


def check_config(cfg: DictConfig) -> None:
    """Raise one :class:`ConfigError` listing every checked key whose value is not valid."""
    problems = []
    for key, (types, condition, expected) in CHECKED_KEYS.items():
        value: Any = OmegaConf.select(cfg, key, default=_MISSING)
        if value is _MISSING:
            continue
        type_ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
        if not type_ok or not condition(value):
            problems.append(f"{key}={value!r} must be {expected}")
    if problems:
        raise ConfigError("invalid config: " + "; ".join(problems))
