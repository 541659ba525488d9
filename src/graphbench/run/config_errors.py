"""One line for a mistyped command line: ``dataset=mutg`` ends in
``error: dataset=mutg: no such dataset (did you mean mutag?); --help lists every group's options``
instead of Hydra's list of every option.

Hydra reports a composition error through ``hydra._internal.utils.run_and_report`` (hydra-core 1.3):
:func:`install` wraps it, so that an unknown option of a config group, an unknown config group and an
unknown key become one line naming the closest valid names (:func:`difflib.get_close_matches`); every
other error, and every error under ``HYDRA_FULL_ERROR=1``, is reported by Hydra as before.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any

import hydra._internal.utils as hydra_utils
from hydra.core.global_hydra import GlobalHydra
from hydra.core.object_type import ObjectType
from hydra.errors import ConfigCompositionException, MissingConfigException
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

#: the primary config of ``graphbench.conf``
PRIMARY_CONFIG: str = "config"
#: where the full lists are
HELP_HINT: str = "--help lists every group's options"
_NOT_OVERRIDABLE = re.compile(r"^Could not override '(?P<key>[^']+)'")

_original_run_and_report: Callable[[Callable[[], Any]], Any] = hydra_utils.run_and_report


def did_you_mean(name: str, candidates: Sequence[str]) -> str:
    """`` (did you mean mutag?)``, `` (did you mean gcn or gin?)``, or ``""`` when nothing is close."""
    close = difflib.get_close_matches(name, list(candidates), n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(close)}?)" if close else ""


def missing_option_message(group: str, option: str, options: Sequence[str]) -> str:
    """``dataset=mutg: no such dataset (did you mean mutag?); --help lists every group's options``."""
    return f"{group}={option}: no such {group}{did_you_mean(option, options)}; {HELP_HINT}"


def unknown_key_message(key: str, candidates: Sequence[str]) -> str:
    """``datset: no such config group or key (did you mean dataset?); ...``, ``+key=value`` for a new key."""
    kind = "key" if "." in key else "config group or key"
    return f"{key}: no such {kind}{did_you_mean(key, candidates)}; {HELP_HINT} (+{key}=<value> adds a new key)"


def _flat_keys(config: Any, prefix: str = "") -> list[str]:
    """The dotted keys of ``config`` (an OmegaConf mapping, read unresolved, or a plain dict), at every depth."""
    mapping = OmegaConf.to_container(config, resolve=False) if isinstance(config, DictConfig) else config
    keys: list[str] = []
    if isinstance(mapping, dict):
        for key, value in mapping.items():
            name = f"{prefix}{key}"
            keys.append(name)
            keys.extend(_flat_keys(value, f"{name}."))
    return keys


def _key_candidates(key: str) -> list[str]:
    """Names ``key`` may have meant: the config groups and, at ``key``'s depth, the keys of the default
    config (composed without the command line's overrides)."""
    loader = GlobalHydra.instance().config_loader()
    groups = [group for group in loader.list_groups("") if group != "hydra"]
    try:
        config = loader.load_configuration(PRIMARY_CONFIG, overrides=[], run_mode=RunMode.RUN)
    except Exception:  # the defaults themselves do not compose: suggest groups only
        return groups
    depth = key.count(".")
    keys = [name for name in _flat_keys(config) if name.count(".") == depth and not name.startswith("hydra")]
    return sorted({*groups, *keys}) if depth == 0 else keys


def one_line(exc: BaseException) -> str | None:
    """The one-line message of a mistyped option, group or key; ``None`` for any other error."""
    if not GlobalHydra.instance().is_initialized():
        return None
    if isinstance(exc, MissingConfigException) and exc.missing_cfg_file and "/" in exc.missing_cfg_file:
        group, _, option = exc.missing_cfg_file.rpartition("/")
        if not str(exc).startswith(("Could not find", "Could not load", "In '")):
            return None
        options = GlobalHydra.instance().config_loader().get_group_options(group, results_filter=ObjectType.CONFIG)
        return missing_option_message(group, option, options)
    if isinstance(exc, ConfigCompositionException):
        match = _NOT_OVERRIDABLE.match(str(exc))
        if match is not None:
            return unknown_key_message(match["key"], _key_candidates(match["key"]))
    return None


def run_and_report(func: Callable[[], Any]) -> Any:
    """Hydra's ``run_and_report`` with :func:`one_line` messages for mistyped command lines."""
    return _original_run_and_report(lambda: _one_line_or_raise(func))


def _one_line_or_raise(func: Callable[[], Any]) -> Any:
    """``func()``; a mistyped command line ends in its one-line message and exit code 1."""
    try:
        return func()
    except Exception as exc:
        message = None if os.environ.get("HYDRA_FULL_ERROR") == "1" else one_line(exc)
        if message is None:
            raise
        print(f"error: {message}", file=sys.stderr, flush=True)
        sys.exit(1)


def install() -> None:
    """Report Hydra's composition errors through :func:`run_and_report` (idempotent)."""
    hydra_utils.run_and_report = run_and_report
