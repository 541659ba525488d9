"""Type checks of the config values every run relies on, so that a wrong-typed override ends with
one message naming the key, the value and the expected type, before anything is built."""
from __future__ import annotations

from typing import Any

from omegaconf import DictConfig, OmegaConf

from graphbench.errors import ConfigError

_MISSING = object()

#: key -> (accepted types, human-readable expectation)
TYPED_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "seed": ((int,), "an integer"),
    "dataset.batch_size": ((int,), "a positive integer"),
    "dataset.num_workers": ((int,), "a non-negative integer"),
    "model.hidden_dim": ((int,), "a positive integer"),
    "model.num_layers": ((int,), "a non-negative integer"),
    "model.dropout": ((int, float), "a number in [0, 1)"),
    "model.residual": ((bool,), "true or false"),
    "head.num_layers": ((int,), "a positive integer"),
    "optimizer.lr": ((int, float), "a positive number"),
    "optimizer.weight_decay": ((int, float), "a non-negative number"),
    "budget.max_params": ((int, type(None)), "a positive integer or null"),
    "trainer.max_epochs": ((int,), "an integer"),
}


def check_config(cfg: DictConfig) -> None:
    problems = []
    for key, (types, expected) in TYPED_KEYS.items():
        value: Any = OmegaConf.select(cfg, key, default=_MISSING)
        if value is _MISSING:
            continue
        if isinstance(value, bool) and bool not in types:
            ok = False
        else:
            ok = isinstance(value, types)
        if not ok:
            problems.append(f"{key}={value!r} must be {expected}")
    if problems:
        raise ConfigError("invalid config: " + "; ".join(problems))
