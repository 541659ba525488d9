"""Recipe fidelity, the shared part: compose a recipe and compare it key by key with a transcription of its
source (a mapping of dotted graphbench keys to the values the source's files set)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import DictConfig, OmegaConf

from tests.paths import CONF

_ABSENT = object()


def composed(*overrides: str) -> DictConfig:
    """The config ``python run.py <overrides>`` composes (paths under /tmp, nothing written)."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=[*overrides, "paths.output_dir=/tmp/graphbench-recipe-test"])
    GlobalHydra.instance().clear()
    return cfg


def mismatches(cfg: DictConfig | Mapping[str, Any], transcription: Mapping[str, Any]) -> list[str]:
    """``key: ours <value>, source <value>`` for every transcribed key whose composed value differs
    (``<absent>`` when the config lacks it); ``[]`` when the recipe is its source on every key."""
    node = cfg if isinstance(cfg, DictConfig) else OmegaConf.create(dict(cfg))
    problems = []
    for key, wanted in transcription.items():
        ours = OmegaConf.select(node, key, default=_ABSENT)
        if ours is _ABSENT or ours != wanted:
            shown = "<absent>" if ours is _ABSENT else ours
            problems.append(f"{key}: ours {shown!r}, source {wanted!r}")
    return problems


def deviation_keys(cfg: DictConfig) -> Sequence[str]:
    """The keys the recipe card declares as deviations."""
    return [str(d["key"]) for d in cfg.recipe_card.deviations]


def undeclared(cfg: DictConfig, transcription: Mapping[str, Any]) -> list[str]:
    """The :func:`mismatches` that the recipe card does not declare: a mismatch on ``a.b.c`` is declared by a
    deviation on ``a.b.c``, ``a.b`` or ``a``. ``[]``: the recipe is its source wherever its card does not say
    otherwise."""
    declared = deviation_keys(cfg)
    return [
        line
        for line in mismatches(cfg, transcription)
        if not any(line.split(":")[0] == d or line.split(":")[0].startswith(f"{d}.") for d in declared)
    ]
