"""The paper column: published values that a configuration reproduces, taken from its config.

A task YAML (``task.literature``), an experiment YAML (top-level ``literature``) or a dataset YAML
(``dataset.literature``) lists entries such as ``{metric: accuracy, value: 0.815, std: null, model:
gcn, source: "Kipf & Welling 2017, Table 2"}``. A group of runs is matched with the first entry of its
task, then of its experiment, then of its dataset, whose ``metric`` is the block's metric and whose
``model`` and ``dataset`` (when given) are the group's ``model.name`` and ``dataset.name``: a task such
as ``task=validutil`` measures something else than training does on the same dataset and model, so its
own entries (one per dataset) come first. The gap is reported in units of the reproduced standard deviation,
:math:`(\\bar{x} - x_{\\text{paper}}) / s`, so that "2.0" reads "two of our standard deviations above
the paper".

A recipe that names a paper also carries a top-level ``recipe_card`` (``{source, deviations: [{key, source,
ours, why, effect}]}``, checked by :func:`graphbench.config.checks.recipe_card_problems`):
:func:`recipe_card` reads it from a run's config, and the report prints its deviations under the table.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

#: config keys holding literature entries: the experiment's, then the dataset's
LITERATURE_KEYS: tuple[tuple[str, ...], ...] = (("task", "literature"), ("literature",), ("dataset", "literature"))


@dataclass(frozen=True)
class PaperValue:
    """One published number: ``value`` (± ``std`` when published) of ``metric`` for ``model`` on
    ``dataset`` (``None``: any)."""

    metric: str
    value: float
    source: str
    std: float | None = None
    model: str | None = None
    dataset: str | None = None

    def formatted(self) -> str:
        std = f" ± {self.std:.4f}" if self.std is not None else ""
        return f"{self.value:.4f}{std} ({self.source})"


def _entries(config: dict[str, Any], path: tuple[str, ...]) -> list[Any]:
    node: Any = config
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, list) else []


def _parse(entry: Any) -> PaperValue | None:
    if not isinstance(entry, dict):
        return None
    metric, value, source = entry.get("metric"), entry.get("value"), entry.get("source")
    if not isinstance(metric, str) or not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    std = entry.get("std")
    model = entry.get("model")
    dataset = entry.get("dataset")
    return PaperValue(
        metric=metric,
        value=float(value),
        source=str(source or "source not given"),
        std=float(std) if isinstance(std, (int, float)) and not isinstance(std, bool) else None,
        model=str(model) if model is not None else None,
        dataset=str(dataset) if dataset is not None else None,
    )


def paper_value(config: dict[str, Any] | None, metric: str) -> PaperValue | None:
    """The published value a run with ``config`` is compared with on ``metric``, or ``None``."""
    if not config:
        return None
    model, dataset = (config[key].get("name") if isinstance(config.get(key), dict) else None for key in ("model", "dataset"))
    for path in LITERATURE_KEYS:
        for entry in _entries(config, path):
            paper = _parse(entry)
            if paper is not None and paper.metric == metric and paper.model in (None, model) and paper.dataset in (None, dataset):
                return paper
    return None


def gap_in_std(mean: float, std: float, paper: PaperValue | None) -> float:
    """:math:`(\\bar{x} - x_{\\text{paper}}) / s`; NaN without a paper value or a positive std."""
    if paper is None or not math.isfinite(mean) or not math.isfinite(std) or std <= 0:
        return math.nan
    return (mean - paper.value) / std


@dataclass(frozen=True)
class Deviation:
    """One key where a recipe departs from its source: the source's value, graphbench's, why, and the
    measured effect (``None``: not measured)."""

    key: str
    source: Any
    ours: Any
    why: str
    effect: str | None = None

    def formatted(self) -> str:
        """``model.init: source grand, ours default. <why> Effect: <effect>.``"""
        effect = self.effect if self.effect is not None else "not measured"
        return f"{self.key}: source {_value(self.source)}, ours {_value(self.ours)}. {self.why} Effect: {effect}."


@dataclass(frozen=True)
class RecipeCard:
    """A recipe's source (repository, file and commit, or paper and table) and its deviations."""

    source: str
    deviations: tuple[Deviation, ...] = ()


def _value(value: Any) -> str:
    """A config value as YAML writes a scalar (``0.5``, ``true``, ``null``, a bare string)."""
    return value if isinstance(value, str) else json.dumps(value)


def recipe_card(config: dict[str, Any] | None) -> RecipeCard | None:
    """The top-level ``recipe_card`` of a run's config, or ``None`` when it has none (or not a mapping
    with a ``source``). Deviation entries that are not mappings with a ``key`` are skipped."""
    card = config.get("recipe_card") if config else None
    if not isinstance(card, dict) or not isinstance(card.get("source"), str):
        return None
    entries = card.get("deviations")
    deviations = tuple(
        Deviation(
            key=str(entry["key"]),
            source=entry.get("source"),
            ours=entry.get("ours"),
            why=str(entry.get("why") or ""),
            effect=None if entry.get("effect") is None else str(entry["effect"]),
        )
        for entry in (entries if isinstance(entries, list) else [])
        if isinstance(entry, dict) and entry.get("key") is not None
    )
    return RecipeCard(source=card["source"], deviations=deviations)
