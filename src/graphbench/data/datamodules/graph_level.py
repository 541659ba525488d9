"""The DataModule of graph-level tasks: many graphs, split and mini-batched by graph."""

from __future__ import annotations

import os
from typing import ClassVar

from torch_geometric.transforms import BaseTransform

from graphbench.data.datamodules.base import COMMON_KEYS, DataModule
from graphbench.data.datamodules.many_graphs import MANY_GRAPHS_KEYS, ManyGraphs
from graphbench.data.info import Level
from graphbench.data.sources.base import Source
from graphbench.run.errors import ConfigError


class GraphLevelDataModule(DataModule):
    r"""Graph-level tasks: many graphs with a fixed train/val/test split of the graphs, in mini-batches
    of ``batch_size`` graphs (:class:`~graphbench.data.datamodules.many_graphs.ManyGraphs`), gathered
    on the CPU or, with ``batch_on_device``, on the training device. Everything else (cache, PE,
    feature norm, :attr:`info`) is :class:`~graphbench.data.datamodules.base.DataModule`'s.
    """

    level: ClassVar[Level] = "graph"
    config_keys: ClassVar[tuple[str, ...]] = (*COMMON_KEYS, *MANY_GRAPHS_KEYS)

    def __init__(
        self,
        *,
        source: Source,
        name: str,
        data_dir: str | os.PathLike,
        cache_dir: str | os.PathLike,
        batch_size: int,
        num_workers: int = 0,
        task_type: str,
        metric: str,
        higher_is_better: bool,
        pe_transform: BaseTransform | None = None,
        split: str = "official",
        provenance: str = "",
        download: bool = False,
        feature_norm: str = "none",
        batch_on_device: bool = False,
    ) -> None:
        super().__init__(
            source=source,
            name=name,
            data_dir=data_dir,
            cache_dir=cache_dir,
            num_workers=num_workers,
            task_type=task_type,
            metric=metric,
            higher_is_better=higher_is_better,
            pe_transform=pe_transform,
            split=split,
            provenance=provenance,
            download=download,
            feature_norm=feature_norm,
        )
        if source.one_graph:
            raise ConfigError(f"dataset '{name}': {type(source).__name__} ships one graph; graph-level tasks need many graphs")
        self._layout: ManyGraphs = ManyGraphs(batch_size=batch_size, batch_on_device=batch_on_device)

    @property
    def batch_on_device(self) -> bool:
        return self._layout.batch_on_device
