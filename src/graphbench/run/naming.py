"""Run names that say what was swept, and the config keys that only vary with the seed.

``run.py`` names every job from its Hydra task overrides (:func:`run_group_from_overrides`):
``run_group`` (the W&B group) is what the user chose minus the seed and the keys that only say where
or how a run records and displays itself, so the seeds of one configuration share a group and a sweep
over any key (``optimizer.lr=0.01,0.001``) gives one group per value; ``run_name``
(``conf/config.yaml``) is ``<run_group>,seed=<seed>``.

:func:`seed_dependent_keys` lists the config keys whose resolved value changes when only
``seed`` changes (``seed``, ``run_name``, anything interpolating ``${seed}``). ``train``
records them in ``results.json`` as ``replicate_keys``, so the report can group runs by
their configuration minus the replicate axis.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf, open_dict, read_write

#: W&B's limit on run names and group names.
WANDB_NAME_LIMIT: int = 128
#: Longest ``run_group``: leaves room for ``,seed=<seed>`` (up to 10 digits) in ``run_name``.
MAX_GROUP_LENGTH: int = WANDB_NAME_LIMIT - len(",seed=") - 10
#: Hex digits of the SHA-1 that ends a shortened group name.
HASH_LENGTH: int = 8
#: The group name of a run without task overrides (the default experiment).
DEFAULT_GROUP: str = "default"

#: Top-level override keys that never name a configuration: the replicate axis, the names themselves,
#: how a run resumes and how often it saves its resumable state, the Optuna trial a search's job is.
DROPPED_KEYS: frozenset[str] = frozenset(
    {"seed", "run_name", "run_group", "resume", "checkpoint_every_s", "hparams_search", "optuna_trial"}
)
#: Override keys under these top-level sections only say where or how a run records itself
#: (``paths.data_dir``, ``logger=wandb``, ``logger.wandb.offline``, ``hydra.*``).
DROPPED_SECTIONS: frozenset[str] = frozenset({"paths", "hydra", "logger"})
#: Override keys that only change what a run prints or how often it reports, never its numbers
#: (Lightning's progress bar, model summary, step-logging interval and profiler), with any key under
#: them (``trainer.profiler.dirpath``). Runs that differ only in these are one configuration.
DISPLAY_ONLY_KEYS: frozenset[str] = frozenset(
    {"trainer.enable_progress_bar", "trainer.enable_model_summary", "trainer.log_every_n_steps", "trainer.profiler"}
)
#: Override keys whose last component is one of these are locations (``dataset.cache_dir``,
#: ``trainer.default_root_dir``), not configuration, at any depth.
DROPPED_LEAF_NAMES: frozenset[str] = frozenset(
    {"data_dir", "cache_dir", "output_dir", "log_dir", "save_dir", "dirpath", "default_root_dir", "run_dir", "work_dir"}
)


def _override_key(override: str) -> str:
    """The key of a Hydra override: ``++model.lr=0.1`` -> ``model.lr``, ``~callbacks.x`` -> ``callbacks.x``."""
    return override.split("=", 1)[0].lstrip("+~")


def is_naming_override(override: str) -> bool:
    """Whether ``override`` belongs in a run's group name (see :func:`run_group_from_overrides`)."""
    key = _override_key(override).split("@", 1)[0]  # ``model@foo=gcn``: classified by the group chosen
    parts = re.split(r"[./]", key)  # ``hydra/launcher=...`` is a group path
    if not parts[0]:
        return False
    if len(parts) == 1 and parts[0] in DROPPED_KEYS:
        return False
    if any(key == k or key.startswith(f"{k}.") for k in DISPLAY_ONLY_KEYS):
        return False
    return parts[0] not in DROPPED_SECTIONS and parts[-1] not in DROPPED_LEAF_NAMES


def _name_order(override: str) -> tuple[bool, str]:
    """Sort key: group choices (``model=gcn``, ``hydra/launcher=x``) before dotted values, then by text."""
    return "." in _override_key(override), override


def run_group_from_overrides(overrides: Sequence[str]) -> str:
    """The W&B group of a job: its task overrides minus the seed and where it reads/writes.

    ``overrides`` are the task overrides as Hydra gives them
    (``HydraConfig.get().overrides.task``). Dropped: ``seed``, ``run_name`` and ``run_group``
    (:data:`DROPPED_KEYS`); any key under ``paths``, ``hydra`` or ``logger``
    (:data:`DROPPED_SECTIONS`: where a run reads data, writes output and how it logs); the
    display-only trainer keys such as ``trainer.enable_progress_bar`` (:data:`DISPLAY_ONLY_KEYS`);
    any key whose last component is a location such as ``data_dir`` or ``dirpath``
    (:data:`DROPPED_LEAF_NAMES`). The rest lose a leading ``+``/``++`` (adding a key or
    forcing it names the same configuration); of overrides of one key only the last counts,
    as in Hydra. The rest are sorted — config-group choices
    (``model=gcn``) first, then values (``optimizer.lr=0.01``), each alphabetically, so a
    shortened name still shows the choices — and joined with ``,``:

    >>> run_group_from_overrides(["seed=3", "optimizer.lr=0.01", "model=gcn", "paths.data_dir=../data"])
    'model=gcn,optimizer.lr=0.01'

    Nothing left gives ``"default"``. A name longer than :data:`MAX_GROUP_LENGTH` (so that
    ``run_name`` stays within W&B's 128 characters) keeps its first characters and ends in
    ``~`` plus the first :data:`HASH_LENGTH` hex digits of the SHA-1 of the full name, so
    it is stable across jobs and processes and distinct names stay distinct.
    """
    last = {_override_key(o): o.lstrip("+") for o in overrides if is_naming_override(o)}  # as Hydra: last wins
    kept = sorted(last.values(), key=_name_order)
    name = ",".join(kept) or DEFAULT_GROUP
    if len(name) <= MAX_GROUP_LENGTH:
        return name
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:HASH_LENGTH]
    return f"{name[: MAX_GROUP_LENGTH - HASH_LENGTH - 1]}~{digest}"


def _resolved_leaves(node: DictConfig | ListConfig, prefix: str, out: dict[str, str]) -> None:
    """Dotted leaves of ``node`` as canonical JSON of their resolved values; lists are leaves.

    A key whose value fails to resolve (a missing ``???``, an unknown key, a resolver
    error) is left out.
    """
    if isinstance(node, ListConfig):
        try:
            value: Any = OmegaConf.to_container(node, resolve=True)
        except Exception:
            return
        out[prefix] = json.dumps(value, sort_keys=True, default=str)
        return
    for key in node:
        dotted = f"{prefix}.{key}" if prefix else str(key)
        try:
            child = node[key]
        except Exception:
            continue
        if isinstance(child, (DictConfig, ListConfig)):
            _resolved_leaves(child, dotted, out)
        else:
            out[dotted] = json.dumps(child, sort_keys=True, default=str)


def _with_seed(cfg: DictConfig, seed: int) -> dict[str, str]:
    """Resolved leaves of a copy of ``cfg`` with ``seed`` set, without the ``hydra`` subtree."""
    probe = copy.deepcopy(cfg)
    with read_write(probe), open_dict(probe):
        probe.seed = seed
        if "hydra" in probe:
            del probe["hydra"]
    out: dict[str, str] = {}
    _resolved_leaves(probe, "", out)
    return out


def seed_dependent_keys(cfg: DictConfig) -> list[str]:
    """Dotted config keys whose resolved value changes when only ``seed`` changes, sorted.

    ``cfg`` is the unresolved config (interpolations intact). Two copies are resolved, one
    with ``seed`` (0 if it is not an integer) and one with ``seed + 1``, and their leaves are
    compared; lists count as one leaf. The ``hydra`` subtree is skipped; ``${hydra:...}``
    interpolations elsewhere resolve inside a Hydra job as usual. A key that fails to resolve
    in either copy is treated as not seed-dependent. With the default config::

        seed_dependent_keys(cfg) == ["run_name", "seed"]
    """
    raw_seed = cfg.get("seed")
    base = raw_seed if isinstance(raw_seed, int) and not isinstance(raw_seed, bool) else 0
    first, second = _with_seed(cfg, base), _with_seed(cfg, base + 1)
    return sorted(key for key in first.keys() & second.keys() if first[key] != second[key])
