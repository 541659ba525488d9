"""Hand-built DataModules for the data tests: a source, its raw and cache directories and the protocol
of its task (``name``, ``task_type``, ``metric``, ``higher_is_better``), with the rest of its
:class:`DatasetConfig` at the schema's defaults (``download`` stays false: nothing is fetched)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from graphbench.data.datamodules import DataModule, GraphLevelDataModule, NodeLevelDataModule
from graphbench.data.datamodules.schema import DatasetConfig, ManyGraphsConfig
from graphbench.data.sources.base import Source

#: a DataModule class
Module = TypeVar("Module", bound=DataModule)


def datamodule(
    level: type[Module],
    source: Source,
    root: Path,
    cache: Path,
    *,
    name: str,
    task_type: str,
    metric: str,
    higher_is_better: bool,
    batch_size: int | None = 4,
    batch_on_device: bool = False,
    **dataset_keys: Any,
) -> Module:
    """``level``'s DataModule on ``source``: dataset ``name`` with its raw files under ``root``, its cache
    under ``cache``, ``dataset_keys`` (``split``, ``feature_norm``, ...) set and the other keys of its
    :class:`DatasetConfig` at their defaults. Many graphs take ``batch_size`` graphs per batch; one graph
    (``batch_size=None``) takes its layout's defaults and the full-batch sampler."""
    dataset = DatasetConfig(name, root, cache, task_type, metric, higher_is_better, **dataset_keys)
    layout = None if batch_size is None else ManyGraphsConfig(batch_size=batch_size, batch_on_device=batch_on_device)
    return level(source=source, dataset=dataset, layout=layout)


#: a graph-level DataModule (:func:`datamodule`)
graph_level = partial(datamodule, GraphLevelDataModule)
#: a node-level DataModule (:func:`datamodule`; ``batch_size=None`` for one graph)
node_level = partial(datamodule, NodeLevelDataModule)
