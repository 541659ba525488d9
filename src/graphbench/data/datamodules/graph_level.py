"""The DataModule of graph-level tasks: many graphs, split and mini-batched by graph."""

from __future__ import annotations

from typing import ClassVar

from graphbench.data.datamodules.base import DataModule
from graphbench.data.datamodules.many_graphs import ManyGraphs, many_graphs_layout
from graphbench.data.datamodules.schema import LayoutConfig, ManyGraphsConfig
from graphbench.data.info import Level
from graphbench.data.samplers.base import Sampler
from graphbench.vocabulary.errors import ConfigError


class GraphLevelDataModule(DataModule):
    r"""Graph-level tasks: many graphs with a fixed train/val/test split of the graphs, in mini-batches
    of ``batch_size`` graphs (:class:`~graphbench.data.datamodules.many_graphs.ManyGraphs`, configured
    by a :class:`~graphbench.data.datamodules.schema.ManyGraphsConfig`), gathered on the CPU or, with
    ``batch_on_device``, on the training device. Everything else (cache, PE, feature norm,
    :attr:`info`) is :class:`~graphbench.data.datamodules.base.DataModule`'s.
    """

    level: ClassVar[Level] = "graph"
    layouts: ClassVar[tuple[type[LayoutConfig], ...]] = (ManyGraphsConfig,)
    _layout: ManyGraphs

    def make_layout(self, layout: LayoutConfig | None, sampler: Sampler | None) -> ManyGraphs:
        if self.source.one_graph:
            raise ConfigError(
                f"dataset '{self.name}': {type(self.source).__name__} ships one graph; graph-level tasks need many graphs"
            )
        return many_graphs_layout(self.name, self.layout_of(ManyGraphsConfig, layout), sampler, level=self.level)

    @property
    def batch_on_device(self) -> bool:
        return self._layout.batch_on_device
