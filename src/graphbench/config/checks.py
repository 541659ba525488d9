"""Checks of the config values every run relies on, so that a wrong override ends with one message
naming the key, the value and what is valid, before anything is built: every node against its schema
(:mod:`graphbench.config.schema`), the accelerator against the machine, and the recipe card."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import torch
from omegaconf import DictConfig, ListConfig, OmegaConf

from graphbench.config.schema import SCHEMAS, problems
from graphbench.vocabulary.errors import ConfigError

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


def schema_problems(cfg: DictConfig) -> list[str]:
    """One line for each key of ``cfg`` that its node's schema refuses (:data:`graphbench.config.schema.SCHEMAS`,
    in their order); a node that ``cfg`` does not hold is not checked."""
    found = []
    for path, schema in SCHEMAS.items():
        node = OmegaConf.select(cfg, path) if path else cfg
        if not isinstance(node, DictConfig):
            continue
        # an open schema's node: only the keys it names are resolved (the top level holds Hydra's own interpolations)
        keys = [str(key) for key in node] if schema.closed else [f.name for f in fields(schema) if f.name in node]
        values = {key: plain(node[key]) for key in keys}
        found += problems(values, schema, path)
    return found


def plain(value: Any) -> Any:
    """``value`` (a key's value in a config) as plain Python, its interpolations resolved."""
    return OmegaConf.to_container(value, resolve=True) if isinstance(value, (DictConfig, ListConfig)) else value


def check_config(cfg: DictConfig) -> None:
    """Raise one :class:`ConfigError` listing every key whose value its schema refuses (:func:`schema_problems`),
    a CUDA accelerator without a CUDA GPU (:func:`accelerator_problems`), and every problem of the recipe card
    (:func:`recipe_card_problems`)."""
    found = schema_problems(cfg)
    found += accelerator_problems(OmegaConf.select(cfg, "trainer.accelerator", default=None), torch.cuda.is_available())
    found += recipe_card_problems(OmegaConf.select(cfg, "recipe_card", default=None))
    if found:
        raise ConfigError("invalid config: " + "; ".join(found))
