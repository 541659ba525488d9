"""One line for a mistyped command line: ``dataset=mutg`` ends in
``error: dataset=mutg: no such dataset (did you mean mutag?); --help lists every group's options``
instead of Hydra's traceback and list of every option.

Hydra reports a composition error through ``hydra._internal.utils.run_and_report`` (hydra-core 1.3):
:func:`install` wraps it, so that an unknown option of a config group, an unknown config group and an
unknown key become one line naming the closest valid names (:func:`difflib.get_close_matches`), or,
when none is close, every valid one. A key that the node's ``_target_`` accepts as an argument though
the config does not set it (``trainer.accumulate_grad_batches``, an argument of ``lightning.Trainer``)
gets the override that passes it, ``++trainer.accumulate_grad_batches=<value>``; no other key is
offered as a new one, since the built object would refuse it. Every other error, and every error under
``HYDRA_FULL_ERROR=1``, is reported by Hydra as before.
"""

from __future__ import annotations

import difflib
import inspect
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
from hydra.utils import get_object
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
    """``dataset=mutg: no such dataset (did you mean mutag?); --help lists every group's options``; every
    option of the group when none is close."""
    close = did_you_mean(option, options)
    listed = close or f"; the options: {', '.join(sorted(options))}"
    return f"{group}={option}: no such {group}{listed}; {HELP_HINT}"


def unknown_key_message(key: str, candidates: Sequence[str], siblings: Sequence[str] = (), target: str | None = None) -> str:
    """``trainer.max_epoch: no such key (did you mean trainer.max_epochs?); ...``. ``candidates``: the names
    ``key``'s last part may have meant, beside it; ``siblings``: the keys beside it, listed when none is
    close; ``target``: the ``_target_`` that accepts ``key``'s last part as an argument (then
    ``++key=<value>`` passes it, and nothing else is suggested)."""
    parent, dot, leaf = key.rpartition(".")
    kind = "key" if dot else "config group or key"
    message = f"{key}: no such {kind}"
    if target is not None:
        return f"{message}; ++{key}=<value> passes it to {target}; {HELP_HINT}"
    close = difflib.get_close_matches(leaf, [name for name in candidates if name != leaf], n=3, cutoff=0.6)
    if close:
        message += f" (did you mean {' or '.join(parent + dot + name for name in close)}?)"
    elif siblings:
        message += f"; {parent + chr(39) + 's keys' if parent else 'the groups and keys'}: {', '.join(sorted(siblings))}"
    return f"{message}; {HELP_HINT}"


def target_arguments(target: str) -> tuple[list[str], bool]:
    """The keyword arguments ``target`` (a ``_target_`` path) accepts, and whether it accepts any (``**kwargs``);
    ``([], False)`` when it cannot be imported or inspected."""
    try:
        parameters = inspect.signature(get_object(target)).parameters.values()
    except Exception:  # an unimportable or uninspectable target: offer none of its names
        return [], False
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    names = [p.name for p in parameters if p.kind in keyword and p.name != "self"]
    return names, any(p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters)


def _default_config() -> DictConfig | None:
    """The primary config composed without the command line's overrides; ``None`` when it does not compose."""
    loader = GlobalHydra.instance().config_loader()
    try:
        return loader.load_configuration(PRIMARY_CONFIG, overrides=[], run_mode=RunMode.RUN)
    except Exception:  # the defaults themselves do not compose
        return None


def unknown_key(key: str) -> str:
    """The message for ``key``, which the config does not have: the names it may have meant (the config
    groups and top-level keys, or the keys beside it and its node's ``_target_``'s arguments), read from the
    default config (:func:`unknown_key_message`)."""
    config = _default_config()
    parent_key, _, leaf = key.rpartition(".")
    if not parent_key:
        groups = [group for group in GlobalHydra.instance().config_loader().list_groups("") if group != "hydra"]
        top = sorted({*groups, *(str(name) for name in (config or {}) if not str(name).startswith("hydra"))})
        return unknown_key_message(key, top, top)
    parent = OmegaConf.select(config, parent_key, default=None) if config is not None else None
    if not isinstance(parent, DictConfig):
        return unknown_key_message(key, [])
    siblings = [str(name) for name in parent if name != "_target_"]
    target = parent.get("_target_") if "_target_" in parent else None
    arguments, any_keyword = target_arguments(target) if isinstance(target, str) else ([], False)
    accepts = isinstance(target, str) and (leaf in arguments or any_keyword)
    return unknown_key_message(key, sorted({*siblings, *arguments}), siblings, target if accepts else None)


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
            return unknown_key(match["key"])
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
