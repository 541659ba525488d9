"""Checkpoints as inputs (``ckpt_path=...``): read one, tell what network it holds, load its weights.

A checkpoint of a graphbench run (``<run dir>/checkpoints/best.ckpt`` or ``last.ckpt``) describes
itself: :class:`~graphbench.modules.task_module.GraphTaskModule` saves the run's composed, resolved
config among its hyperparameters (``hyper_parameters["config"]``), so ``task=eval`` rebuilds the
network from the checkpoint alone. The network is what the groups :data:`NETWORK_GROUPS` say, with the
width solved again under the checkpoint's budget (the solve is deterministic) and the dataset's facts
(feature dimensions, number of tasks) from the dataset evaluated on.

A checkpoint is a pickle: load only checkpoints you trust.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig, OmegaConf, open_dict
from torch import nn

from graphbench.run.record import flat_config
from graphbench.vocabulary.errors import ConfigError

#: the config groups that say what the network is (its layers, width, head, PE encoder, norm)
NETWORK_GROUPS: tuple[str, ...] = ("model", "head", "pe", "normalization", "budget")
#: network keys that say how the network runs, not what it is: the command line's value is kept
RUN_KEYS: tuple[str, ...] = ("model.compile", "model.compile_mode")
#: where the LightningModule keeps its network: the prefix of the network's keys in the checkpoint's state_dict
NETWORK_PREFIX: str = "network."

#: ``task.checkpoint``: the weights a run is tested with, the best validation epoch's or the last epoch's
CHECKPOINTS: tuple[str, ...] = ("best", "last")


def check_checkpoint_file(path: str | Path) -> Path:
    """``path`` as a ``Path``; a one-line :class:`ConfigError` when no file is there."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise ConfigError(
            f"ckpt_path={path} is not a file: give the checkpoint of a run, e.g. ckpt_path=<run dir>/checkpoints/best.ckpt"
        )
    return file


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """The checkpoint at ``path`` (a Lightning checkpoint: a dict with a ``state_dict``), loaded on the CPU.
    Raises a one-line :class:`ConfigError` when it is missing, unreadable or not a Lightning checkpoint."""
    file = check_checkpoint_file(path)
    try:
        checkpoint = torch.load(file, map_location="cpu", weights_only=False)
    except Exception as exc:
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
        raise ConfigError(f"ckpt_path={path} is not a readable checkpoint ({reason})") from None
    if not isinstance(checkpoint, dict) or not isinstance(checkpoint.get("state_dict"), dict):
        raise ConfigError(
            f"ckpt_path={path} is not a Lightning checkpoint (no state_dict): give <run dir>/checkpoints/best.ckpt or last.ckpt"
        )
    return checkpoint


def checkpoint_config(checkpoint: dict[str, Any]) -> dict[str, Any] | None:
    """The run config a checkpoint describes itself with, or ``None`` for a checkpoint saved without one."""
    config = (checkpoint.get("hyper_parameters") or {}).get("config")
    return config if isinstance(config, dict) else None


def override_key(override: str) -> str:
    """The config key of a Hydra override: ``model.hidden_dim`` for ``++model.hidden_dim=16``, ``model``
    for ``model=gcn``, ``model`` for ``~model``."""
    return override.lstrip("+~").split("=", 1)[0].split("@", 1)[0]


def network_overrides(overrides: Sequence[str]) -> list[str]:
    """The keys among ``overrides`` that choose or change a network group (:data:`NETWORK_GROUPS`), except
    the :data:`RUN_KEYS`. A group choice (``model=gcn``) is given as ``model.name``."""
    keys = []
    for override in overrides:
        key = override_key(override)
        group = key.split(".", 1)[0]
        if group in NETWORK_GROUPS and key not in RUN_KEYS:
            keys.append(f"{group}.name" if key == group else key)
    return keys


def network_from_checkpoint(cfg: DictConfig, config: dict[str, Any], overrides: Sequence[str], path: str) -> DictConfig:
    """``cfg`` with the network groups of the checkpoint's ``config`` (:data:`RUN_KEYS` stay the command
    line's). The command line may restate the checkpoint's network, never contradict it: an override of
    a network key (``model=gine``, ``model.hidden_dim=64``) whose value differs from the checkpoint's
    raises one :class:`ConfigError` line naming both values."""
    missing = [group for group in NETWORK_GROUPS if not isinstance(config.get(group), dict)]
    if missing:
        raise ConfigError(f"ckpt_path={path}: its config has no {', '.join(missing)} group: it is not a graphbench checkpoint")
    saved = flat_config({group: config[group] for group in NETWORK_GROUPS})
    asked = flat_config(OmegaConf.to_container(OmegaConf.masked_copy(cfg, list(NETWORK_GROUPS)), resolve=True))  # type: ignore[arg-type]
    conflicts = [
        f"{key}={asked.get(key)!r} (the checkpoint's: {saved.get(key)!r})"
        for key in network_overrides(overrides)
        if _under(saved, key) != _under(asked, key)
    ]
    if conflicts:
        raise ConfigError(
            f"ckpt_path={path} holds another network than the command line asks for: {'; '.join(conflicts)}; "
            "drop those overrides (task=eval rebuilds the network from the checkpoint)"
        )
    run_values = {key: OmegaConf.select(cfg, key) for key in RUN_KEYS}
    merged = cfg.copy()
    with open_dict(merged):
        for group in NETWORK_GROUPS:
            merged[group] = OmegaConf.create(config[group])
        for key, value in run_values.items():
            if value is not None:
                OmegaConf.update(merged, key, value, force_add=True)
    return merged


def _under(flat: dict[str, Any], key: str) -> dict[str, Any]:
    """The entries of a flat config at ``key`` or below it."""
    return {k: v for k, v in flat.items() if k == key or k.startswith(f"{key}.")}


def load_network_weights(network: nn.Module, checkpoint: dict[str, Any], path: str) -> None:
    """Load the network weights of ``checkpoint`` (its state_dict's ``network.*`` entries) into ``network``,
    strictly: a checkpoint whose weights do not fit (other layers, width or feature dimensions) raises one
    :class:`ConfigError` line naming the first keys that differ. The optimizer, scheduler and metric
    states of the checkpoint are not loaded."""
    weights = {k[len(NETWORK_PREFIX) :]: v for k, v in checkpoint["state_dict"].items() if k.startswith(NETWORK_PREFIX)}
    if not weights:
        raise ConfigError(f"ckpt_path={path} holds no network weights (no state_dict key starts with '{NETWORK_PREFIX}')")
    own = network.state_dict()
    problems = [f"missing {k}" for k in sorted(own.keys() - weights.keys())]
    problems += [f"unexpected {k}" for k in sorted(weights.keys() - own.keys())]
    problems += [
        f"{k}: {tuple(weights[k].shape)} in the checkpoint, {tuple(own[k].shape)} here"
        for k in sorted(own.keys() & weights.keys())
        if own[k].shape != weights[k].shape
    ]
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise ConfigError(
            f"ckpt_path={path} does not fit the network built here: {'; '.join(problems[:3])}{more}; "
            "the model, head, pe, normalization, budget and the dataset's feature dimensions must be those it was trained with"
        )
    network.load_state_dict(weights, strict=True)
