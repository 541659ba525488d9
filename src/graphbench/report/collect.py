r"""Load ``results.json`` files from Hydra run directories and group them into configurations.

Every training run writes ``results.json`` into its Hydra run directory; a multirun
directory holds numbered job subdirectories (``0/``, ``1/``, ...). :func:`collect` finds
every ``results.json`` below the given directories (recursively), and

1. separates *usable* runs (``status == "completed"``, a config, a metric name,
   ``higher_is_better`` and a finite score: ``test/<metric>``, or the ``metrics`` key the record
   names in ``score``, such as ``memorization/rate``) from the rest, which are kept
   as :class:`FailedRun` entries with a reason — no run is ever dropped silently;
2. partitions usable runs into :class:`Block`\ s by ``(dataset.name, metric,
   higher_is_better, score key)``: statistics and rankings only compare runs on the same task;
3. groups the runs of a block by their resolved config minus the seed and everything
   derived from it — the keys the run lists in ``replicate_keys`` (written by ``train``:
   the keys whose resolved value changes when only ``seed`` changes, such as ``run_name``),
   plus ``run_name`` by name for older results — and minus run-specific locations (see
   :func:`grouping_items` for the exact rule), and, unless ``by_fold`` is set, minus the
   dataset's *fold keys* (:func:`fold_names`: ``dataset.split_index`` and any key the dataset
   names in ``dataset.fold_key``), the keys below ``dataset`` interpolating them (same leaf
   name, e.g. ``dataset.source.split_index``) and ``run_group`` (its name spells the fold
   override). Folds are a replicate axis like the seed, so one :class:`Group` is one
   configuration evaluated over ``folds x seeds`` runs (Benchmarking GNNs, Geom-GCN and
   GraphGPS report mean ± std over folds); with ``by_fold`` each fold is its own group;
4. labels each group by the config values that differ between groups of its block
   (see :func:`make_labels`), e.g. ``model=gcn head=mlp2``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphbench.run.record import RESULTS_FILENAME, RunRecord

#: Top-level config keys that never distinguish configurations: ``seed`` is the
#: replicate axis, ``run_name`` is derived from it (named here for results.json files
#: written before ``replicate_keys`` existed), ``paths`` and ``logger`` are where/how a run
#: records itself, ``hydra`` is launcher state, ``recipe_card`` describes a recipe's other keys
#: (the report prints it under the table), ``optuna_trial`` names the search trial a run was.
IGNORED_TOP_LEVEL_KEYS: frozenset[str] = frozenset(
    {"seed", "run_name", "resume", "paths", "logger", "hydra", "recipe_card", "optuna_trial"}
)
#: Top-level keys that name a configuration for loggers (e.g. ``model=gcn,optimizer.lr=0.01``):
#: they take part in grouping, but a label shows them only when the other differing keys
#: do not already tell the groups apart (see :func:`make_labels`).
NAMING_KEYS: frozenset[str] = frozenset({"run_group"})
#: Top-level keys starting with these prefixes are also ignored (``hydra*``, ``_*``).
IGNORED_TOP_LEVEL_PREFIXES: tuple[str, ...] = ("hydra", "_")
#: Keys ignored at any depth: nested seeds (``seed: ${seed}``) and per-run output
#: locations (e.g. ``callbacks.model_checkpoint.dirpath``, ``trainer.default_root_dir``).
IGNORED_KEY_NAMES: frozenset[str] = frozenset(
    {"seed", "output_dir", "log_dir", "save_dir", "dirpath", "default_root_dir", "run_dir", "work_dir", "literature"}
)
#: Shown instead of a value when a key is missing from a group's config.
ABSENT: str = "<absent>"
#: Added to the label of a group of ``trainer.fast_dev_run`` runs (smoke tests, not results).
FAST_DEV_RUN_MARK: str = "[fast_dev_run]"
#: Added to the label of a group of runs validated or tested on part of a split (:attr:`Run.evaluation_limits`).
PARTIAL_EVALUATION_MARK: str = "[partial evaluation]"
#: Lightning's limits on the batches of the splits a run is selected and scored on.
EVALUATION_LIMITS: tuple[str, ...] = ("limit_val_batches", "limit_test_batches")
#: The key below ``dataset`` that indexes a fold in every dataset that has folds (the TU 10-fold CV,
#: the Geom-GCN and WikiCS splits, CSL's 5 folds): ``dataset.split_index``.
DEFAULT_FOLD_KEY: str = "split_index"
#: The key below ``dataset`` by which a dataset declares further fold keys (a name or a list of names).
FOLD_KEY_DECLARATION: str = "fold_key"


def fold_names(config: dict[str, Any]) -> tuple[str, ...]:
    """The keys below ``dataset`` that index a fold: ``split_index`` plus those named in ``dataset.fold_key``.

    Raises ``ValueError`` naming the value when ``dataset.fold_key`` is neither a key name nor a list of them.
    """
    dataset = config.get("dataset")
    declared = dataset.get(FOLD_KEY_DECLARATION) if isinstance(dataset, dict) else None
    if declared is None:
        return (DEFAULT_FOLD_KEY,)
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not all(isinstance(name, str) and name for name in names):
        raise ValueError(f"dataset.{FOLD_KEY_DECLARATION}={declared!r}: expected a key name below dataset or a list of them")
    return tuple(dict.fromkeys([DEFAULT_FOLD_KEY, *names]))


class ReportInputError(Exception):
    """A report input (directory) does not exist or holds no ``results.json``."""


@dataclass(frozen=True)
class Run:
    """One training run: its directory, its status and its ``results.json`` read as a
    :class:`~graphbench.run.record.RunRecord` (``None`` when the file could not be read)."""

    path: Path
    status: str
    config: dict[str, Any] | None
    record: RunRecord | None

    @property
    def seed(self) -> int | None:
        """The top-level ``seed`` of the config, or ``None`` when absent."""
        seed = (self.config or {}).get("seed")
        return seed if isinstance(seed, int) and not isinstance(seed, bool) else None

    @property
    def fold(self) -> str:
        """The run's fold as ``split_index=1`` (several fold keys joined by spaces), or ``""`` without one."""
        dataset = (self.config or {}).get("dataset")
        if not isinstance(dataset, dict):
            return ""
        return " ".join(f"{name}={dataset[name]}" for name in fold_names(self.config or {}) if name in dataset)

    @property
    def replicate_keys(self) -> tuple[str, ...]:
        """The dotted config keys derived from the seed (``results.json`` ``replicate_keys``), or ``()``."""
        keys = self.record.replicate_keys if self.record is not None else None
        if not isinstance(keys, list):
            return ()
        return tuple(key for key in keys if isinstance(key, str))

    @property
    def higher_is_better(self) -> bool | None:
        value = self.record.higher_is_better if self.record is not None else None
        return value if isinstance(value, bool) else None

    @property
    def metric(self) -> str | None:
        """The task metric name (``"ap"``), from ``metric`` or else from ``monitor``."""
        if self.record is None:
            return None
        metric = self.record.metric
        if isinstance(metric, str) and metric:
            return metric
        monitor = self.record.monitor
        if isinstance(monitor, str) and "/" in monitor:
            return monitor.split("/", 1)[1]
        return None

    @property
    def dataset(self) -> str:
        """``config.dataset.name``, or ``"unknown"``."""
        dataset = (self.config or {}).get("dataset")
        name = dataset.get("name") if isinstance(dataset, dict) else None
        return str(name) if name is not None else "unknown"

    @property
    def fast_dev_run(self) -> bool:
        """Whether the run was a smoke test (``trainer.fast_dev_run``: a batch or a few per split)."""
        trainer = (self.config or {}).get("trainer")
        value = trainer.get("fast_dev_run") if isinstance(trainer, dict) else None
        return value is True or (isinstance(value, int) and not isinstance(value, bool) and value > 0)

    @property
    def evaluation_limits(self) -> tuple[str, ...]:
        """``trainer.limit_test_batches=1``, ...: the :data:`EVALUATION_LIMITS` under which the run saw part of
        its validation or test split (Lightning: an integer is a number of batches, a float a fraction; ``1.0``
        and ``null`` are the whole split). Empty when it saw both whole."""
        trainer = (self.config or {}).get("trainer")
        if not isinstance(trainer, dict):
            return ()
        limits = []
        for key in EVALUATION_LIMITS:
            value = trainer.get(key)
            whole = value is None or (isinstance(value, float) and value >= 1.0)
            if not whole:
                limits.append(f"trainer.{key}={value}")
        return tuple(limits)

    @property
    def score_key(self) -> str | None:
        """The ``metrics`` key the report tabulates: the record's ``score``, else ``test/<metric>``."""
        score = self.record.score if self.record is not None else None
        if isinstance(score, str) and score:
            return score
        return f"test/{self.metric}" if self.metric is not None else None

    def value(self, key: str) -> float:
        """A ``metrics`` entry (``"test/ap"``, ``"mia_auc"``) or else a top-level number (``"num_params"``); NaN if absent."""
        if self.record is None:
            return math.nan
        metrics = self.record.metrics if isinstance(self.record.metrics, dict) else {}
        if key in metrics:
            raw = metrics[key]
        else:
            raw = getattr(self.record, key, None) if "/" not in key else None
        if isinstance(raw, (int, float)) and not isinstance(raw, bool):
            return float(raw)
        return math.nan


@dataclass(frozen=True)
class FailedRun:
    """A run excluded from the statistics, with why, and its group's label when known."""

    path: Path
    status: str
    label: str | None = None


@dataclass
class Group:
    """Runs sharing one configuration (config minus ignored keys); one row of the table."""

    key: str
    items: dict[str, str]
    runs: list[Run] = field(default_factory=list)
    label: str = ""


@dataclass
class Block:
    """Groups on one task, i.e. one ``(dataset, metric, higher_is_better, score key)``; one table.
    ``score_key`` is the tabulated ``metrics`` key (``""``: ``test/<metric>``)."""

    dataset: str
    metric: str
    higher_is_better: bool
    groups: list[Group]
    fixed: str = ""
    score_key: str = ""

    @property
    def test_key(self) -> str:
        """The ``metrics`` key compared across groups: ``test/<metric>`` or the runs' own score key."""
        return self.score_key or f"test/{self.metric}"

    @property
    def val_key(self) -> str | None:
        """``val/<metric>`` beside a ``test/<metric>`` score; ``None`` for a task's own score."""
        return f"val/{self.metric}" if self.test_key == f"test/{self.metric}" else None


@dataclass
class Collection:
    """Everything :func:`collect` found."""

    blocks: list[Block]
    failed: list[FailedRun]


def _natural_key(path: Path) -> list[tuple[int, int | str]]:
    """Sort key that orders ``2/`` before ``10/``."""
    return [(0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", path.as_posix()) if p]


def find_result_files(dirs: Sequence[Path]) -> list[Path]:
    """All ``results.json`` below ``dirs`` (recursive, de-duplicated, natural order).

    Raises :class:`ReportInputError` naming the path when a directory does not exist,
    is not a directory, or holds no ``results.json``.
    """
    found: dict[Path, Path] = {}
    for directory in dirs:
        if not directory.exists():
            raise ReportInputError(f"{directory}: no such directory")
        if not directory.is_dir():
            raise ReportInputError(f"{directory}: not a directory (pass a Hydra run or multirun directory)")
        files = sorted(directory.rglob(RESULTS_FILENAME), key=_natural_key)
        if not files:
            raise ReportInputError(
                f"{directory}: no {RESULTS_FILENAME} found below it "
                f"(expected e.g. {directory / '0' / RESULTS_FILENAME}; did the runs start?)"
            )
        for file in files:
            found.setdefault(file.resolve(), file)
    return list(found.values())


def load_run(results_file: Path) -> Run:
    """Read one ``results.json`` through :class:`RunRecord`; an unreadable file becomes a failed run."""
    try:
        record = RunRecord.read(results_file)
    except (OSError, ValueError, TypeError) as err:
        reason = (
            str(err)
            if isinstance(err, ValueError) and RESULTS_FILENAME in str(err)
            else f"unreadable {RESULTS_FILENAME} ({type(err).__name__}: {err})"
        )
        return Run(results_file.parent, f"failed: {reason}", None, None)
    return Run(path=results_file.parent, status=record.status, config=record.config, record=record)


def unusable_reason(run: Run) -> str | None:
    """``None`` if the run enters the statistics, else the status shown in the failed list."""
    if run.status != "completed":
        return run.status
    if run.config is None:
        return "completed, but results.json has no 'config' (cannot group it)"
    try:
        fold_names(run.config)
    except ValueError as err:
        return f"completed, but {err}"
    if run.metric is None:
        return "completed, but results.json has neither 'metric' nor 'monitor'"
    if run.higher_is_better is None:
        return "completed, but results.json has no boolean 'higher_is_better'"
    if not math.isfinite(run.value(str(run.score_key))):
        return f"completed, but '{run.score_key}' is missing or not a finite number"
    return None


def _flatten(value: Any, prefix: str, out: dict[str, str], output_dir: str) -> None:
    """Dotted leaves of ``value`` as canonical JSON, minus ignored names and run-specific paths."""
    if isinstance(value, dict):
        for key, sub in value.items():
            if str(key) not in IGNORED_KEY_NAMES:
                _flatten(sub, f"{prefix}.{key}" if prefix else str(key), out, output_dir)
        return
    if output_dir and isinstance(value, str) and output_dir in value:
        return  # interpolated from ${paths.output_dir}: differs per run by construction
    out[prefix] = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def grouping_items(config: dict[str, Any], replicate_keys: Sequence[str] = (), by_fold: bool = True) -> dict[str, str]:
    """The config as ``{dotted.key: canonical JSON value}``, minus what never defines a group.

    With ``by_fold=False`` the folds are replicates: also ignored are the keys below ``dataset``
    whose last part is a fold key (:func:`fold_names`; ``dataset.split_index`` and what
    interpolates it, such as ``dataset.source.split_index``) and ``run_group``, whose name
    spells the fold override. Always ignored: the dotted keys in ``replicate_keys`` (the run's own list of keys derived from
    the seed, see :attr:`Run.replicate_keys`) and everything below them; top-level keys in
    :data:`IGNORED_TOP_LEVEL_KEYS` (``seed``, ``run_name``, ``paths``, ``logger``, ``hydra``)
    or starting with :data:`IGNORED_TOP_LEVEL_PREFIXES`; keys named in
    :data:`IGNORED_KEY_NAMES` at any depth; and any string value containing the run's own
    ``paths.output_dir``. Lists are compared whole, as JSON.
    """
    paths = config.get("paths")
    output_dir = str(paths.get("output_dir") or "") if isinstance(paths, dict) else ""
    kept = {
        key: value
        for key, value in config.items()
        if key not in IGNORED_TOP_LEVEL_KEYS and not str(key).startswith(IGNORED_TOP_LEVEL_PREFIXES)
    }
    out: dict[str, str] = {}
    _flatten(kept, "", out, output_dir)
    prefixes = tuple(f"{key}." for key in replicate_keys)
    items = {key: value for key, value in out.items() if key not in replicate_keys and not key.startswith(prefixes)}
    if by_fold:
        return items
    folds = fold_names(config)
    return {
        key: value
        for key, value in items.items()
        if key not in NAMING_KEYS and not (key.startswith("dataset.") and key.rsplit(".", 1)[1] in folds)
    }


def _show(key: str, raw: str, name_keys: Sequence[str]) -> str:
    """``key=value`` in Hydra override style (``model=gcn`` for a ``model.name`` key)."""
    shown_key = key[: -len(".name")] if key in name_keys else key
    if raw == ABSENT:
        return f"{shown_key}={ABSENT}"
    value = json.loads(raw)
    return f"{shown_key}={value if isinstance(value, str) else raw}"


def _determined_by(items: Sequence[dict[str, str]], keys: Sequence[str], key: str) -> bool:
    """Whether ``key``'s value is a function of the values of ``keys`` over the groups (never for no ``keys``)."""
    seen: dict[tuple[str, ...], str] = {}
    for group_items in items:
        given = tuple(group_items.get(other, ABSENT) for other in keys)
        if seen.setdefault(given, group_items.get(key, ABSENT)) != group_items.get(key, ABSENT):
            return False
    return bool(keys)


def make_labels(items: Sequence[dict[str, str]]) -> tuple[list[str], str]:
    """Labels for groups from the config values that differ between them, plus the fixed part.

    Let ``D`` be the dotted keys whose value is not the same in every group (a missing
    key counts as the value ``<absent>``) and ``N`` the keys of ``D`` of the form
    ``<section>.name``. A label shows every key of ``N`` as ``<section>=<name>`` and every
    other key of ``D`` that is *not* a function of the ``N`` values and of the keys shown
    before it (e.g. ``optimizer.lr`` swept within one model), in config order. Keys fixed by
    the names (a model's own defaults) or by an earlier shown key (``dataset.source.split_index``
    interpolating ``dataset.split_index``) are omitted. The labels are unique because groups
    with equal ``N`` values and equal shown keys have equal configs. The fixed part lists ``<section>=<name>`` for the
    sections whose name is the same in every group. A differing key of :data:`NAMING_KEYS`
    (``run_group``, a name built from the other keys) is left out of the labels when the
    other shown keys already determine it.
    """
    order: list[str] = []
    for group_items in items:
        order.extend(key for key in group_items if key not in order)
    values = [[group_items.get(key, ABSENT) for group_items in items] for key in order]
    differing = [key for key, vals in zip(order, values) if len(set(vals)) > 1]
    name_keys = [key for key in differing if key.count(".") == 1 and key.endswith(".name")]

    descriptive: list[str] = []
    for key in differing:  # in config order: a key that the names and the keys shown before it fix is left out
        if key not in NAMING_KEYS and (key in name_keys or not _determined_by(items, [*name_keys, *descriptive], key)):
            descriptive.append(key)
    naming = [key for key in differing if key in NAMING_KEYS and not _determined_by(items, descriptive, key)]
    shown = [key for key in differing if key in descriptive or key in naming]
    labels = [
        " ".join(_show(key, group_items.get(key, ABSENT), name_keys) for key in shown) or "(all runs)" for group_items in items
    ]
    fixed_names = [key for key in order if key.count(".") == 1 and key.endswith(".name") and key not in differing]
    fixed = " ".join(_show(key, items[0][key], fixed_names) for key in fixed_names)
    return labels, fixed


def collect(dirs: Sequence[Path], by_fold: bool = False) -> Collection:
    """Load, validate, partition and group every run below ``dirs`` (see module docstring).

    ``by_fold=False`` (the default) pools a configuration's folds and seeds in one group;
    ``by_fold=True`` keeps one group per fold."""
    runs = [load_run(file) for file in find_result_files(dirs)]
    failed_runs: list[tuple[Run, str]] = []
    blocks: dict[tuple[str, str, bool, str], dict[str, Group]] = {}
    for run in runs:
        reason = unusable_reason(run)
        if reason is not None:
            failed_runs.append((run, reason))
            continue
        assert run.config is not None and run.metric is not None and run.score_key is not None
        score_key = "" if run.score_key == f"test/{run.metric}" else run.score_key
        block_key = (run.dataset, run.metric, bool(run.higher_is_better), score_key)
        items = grouping_items(run.config, run.replicate_keys, by_fold)
        group_key = json.dumps(items, sort_keys=True)
        groups = blocks.setdefault(block_key, {})
        groups.setdefault(group_key, Group(key=group_key, items=items)).runs.append(run)

    result: list[Block] = []
    label_of: dict[str, str] = {}
    for (dataset, metric, higher, score_key), groups in blocks.items():
        group_list = list(groups.values())
        labels, fixed = make_labels([group.items for group in group_list])
        for group, label in zip(group_list, labels):
            group.label = label
            if any(run.fast_dev_run for run in group.runs):
                group.label = f"{label} {FAST_DEV_RUN_MARK}"
            elif any(run.evaluation_limits for run in group.runs):
                group.label = f"{label} {PARTIAL_EVALUATION_MARK}"
            label_of[group.key] = label if len(blocks) == 1 else f"{label} [dataset={dataset}]"
        result.append(Block(dataset, metric, higher, group_list, fixed, score_key))

    failed = [FailedRun(run.path, reason, _failed_label(run, label_of, by_fold)) for run, reason in failed_runs]
    return Collection(blocks=result, failed=failed)


def _failed_label(run: Run, label_of: dict[str, str], by_fold: bool) -> str | None:
    """The label of the failed run's group; else its ``<section>=<name>`` pairs; else ``None``."""
    if run.config is None:
        return None
    try:
        items = grouping_items(run.config, run.replicate_keys, by_fold)
    except ValueError:  # a malformed dataset.fold_key, the run's failure reason: its config as it is
        items = grouping_items(run.config, run.replicate_keys)
    known = label_of.get(json.dumps(items, sort_keys=True))
    if known is not None:
        return known
    names = [key for key in items if key.count(".") == 1 and key.endswith(".name")]
    return " ".join(_show(key, items[key], names) for key in names) or None
