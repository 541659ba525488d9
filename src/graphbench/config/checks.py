"""Checks of the config values every run relies on, so that a wrong override ends with one message
naming the key, the value and what is valid, before anything is built."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
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


#: ``trainer.accelerator`` values that train on a CUDA GPU (Lightning's names)
CUDA_ACCELERATORS: tuple[str, ...] = ("gpu", "cuda")


def accelerator_problems(accelerator: Any, cuda_available: bool) -> list[str]:
    """``trainer.accelerator=gpu`` (or ``cuda``) on a machine where torch sees no CUDA GPU: what to run instead."""
    if str(accelerator).lower() not in CUDA_ACCELERATORS or cuda_available:
        return []
    return [
        f"trainer.accelerator={accelerator} needs a CUDA GPU and torch sees none here (torch.cuda.is_available() is "
        "false): train on the CPU with trainer=cpu (trainer=ddp_cpu for data parallel), or use trainer=default, "
        "whose accelerator=auto takes the GPU where there is one"
    ]


#: the keys of one entry of ``recipe_card.deviations``, in the order a card writes them
DEVIATION_KEYS: tuple[str, ...] = ("key", "source", "ours", "why", "effect")


def recipe_card_problems(card: Any) -> list[str]:
    """What is wrong with a recipe card (``[]``: nothing). A card is ``null`` or a mapping with exactly
    ``source`` (a non-empty string: repository, file and commit, or paper and table) and ``deviations``
    (a list, ``[]`` when none), each deviation a mapping with exactly :data:`DEVIATION_KEYS`: ``key`` (the
    graphbench config key, a non-empty string), ``source`` and ``ours`` (the two values, any YAML value),
    ``why`` (a non-empty string) and ``effect`` (the measured effect as a string, or ``null`` when not
    measured)."""
    if card is None:
        return []
    if isinstance(card, DictConfig):
        card = OmegaConf.to_container(card, resolve=True)
    if not isinstance(card, dict) or set(card) != {"source", "deviations"}:
        keys = sorted(card) if isinstance(card, dict) else type(card).__name__
        return [f"recipe_card must have exactly the keys deviations and source, got {keys}"]
    problems = []
    if not isinstance(card["source"], str) or not card["source"].strip():
        problems.append(f"recipe_card.source={card['source']!r} must be a non-empty string")
    deviations = card["deviations"]
    if not isinstance(deviations, list):
        return [*problems, f"recipe_card.deviations={deviations!r} must be a list ([] when none)"]
    for index, entry in enumerate(deviations):
        where = f"recipe_card.deviations[{index}]"
        if not isinstance(entry, dict) or set(entry) != set(DEVIATION_KEYS):
            keys = sorted(entry) if isinstance(entry, dict) else type(entry).__name__
            problems.append(f"{where} must have exactly the keys {', '.join(DEVIATION_KEYS)}, got {keys}")
            continue
        for name in ("key", "why"):
            if not isinstance(entry[name], str) or not entry[name].strip():
                problems.append(f"{where}.{name}={entry[name]!r} must be a non-empty string")
        if entry["effect"] is not None and not isinstance(entry["effect"], str):
            problems.append(f"{where}.effect={entry['effect']!r} must be a string or null")
    return problems


def check_config(cfg: DictConfig) -> None:
    """Raise one :class:`ConfigError` listing every checked key whose value is not valid, a CUDA accelerator
    without a CUDA GPU (:func:`accelerator_problems`), and every problem of the recipe card
    (:func:`recipe_card_problems`)."""
    problems = []
    for key, (types, condition, expected) in CHECKED_KEYS.items():
        value: Any = OmegaConf.select(cfg, key, default=_MISSING)
        if value is _MISSING:
            continue
        type_ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
        if not type_ok or not condition(value):
            problems.append(f"{key}={value!r} must be {expected}")
    problems += accelerator_problems(OmegaConf.select(cfg, "trainer.accelerator", default=None), torch.cuda.is_available())
    problems += recipe_card_problems(OmegaConf.select(cfg, "recipe_card", default=None))
    if problems:
        raise ConfigError("invalid config: " + "; ".join(problems))
