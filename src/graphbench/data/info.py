"""Facts about a dataset that the model and the task need, passed explicitly from the DataModule.

This module imports nothing of :mod:`graphbench.data`, so that models and metrics can depend on the
facts without depending on the data layer (or on Lightning through it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Level = Literal["graph", "node", "link"]
TaskType = Literal["multilabel", "multiclass", "binary", "regression"]
FeatureKind = Literal["atom", "bond", "dense", "categorical", "constant"]

TASK_TYPES: tuple[str, ...] = ("multilabel", "multiclass", "binary", "regression")
LEVELS: tuple[str, ...] = ("graph", "node", "link")


@dataclass(frozen=True)
class FeatureSpec:
    """How raw node or edge features look, so that the right input encoder is built.

    ``atom``/``bond``: OGB's 9 atom / 3 bond categorical features (``AtomEncoder``/``BondEncoder``).
    ``dense``: float features of width ``dim``. ``categorical``: integer columns with the given
    cardinalities. ``constant``: no informative feature; every node gets the same learned vector.
    """

    kind: FeatureKind
    dim: int = 0
    cardinalities: tuple[int, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class DataFacts:
    """What a dataset source knows about its data: the size of the output and the input features.

    :class:`DatasetInfo` joins these with what the dataset's YAML states (name, task type, metric).
    """

    num_outputs: int
    node_features: FeatureSpec
    edge_features: FeatureSpec | None


@dataclass(frozen=True)
class DatasetInfo:
    """What a DataModule tells the rest of the platform about its data."""

    name: str
    level: Level
    task_type: TaskType
    num_outputs: int
    metric: str
    higher_is_better: bool
    node_features: FeatureSpec
    edge_features: FeatureSpec | None

    def __post_init__(self) -> None:
        if self.task_type not in TASK_TYPES:
            raise ValueError(f"task_type {self.task_type!r} is not one of {TASK_TYPES}")
        if self.level not in LEVELS:
            raise ValueError(f"level {self.level!r} is not one of {LEVELS}")

    @property
    def monitor(self) -> str:
        """The validation metric that selects the best epoch, e.g. ``val/ap``."""
        return f"val/{self.metric}"
