"""One LightningDataModule per task level; a dataset YAML names one as ``_target_`` and nests its
``source``. They own the processed-data cache, positional encodings, feature normalization and the
loaders (:class:`~graphbench.data.datamodules.base.DataModule`), and hold the data's layout as a
strategy: many graphs (:mod:`~graphbench.data.datamodules.many_graphs`) or one graph batched by a
sampler (:mod:`~graphbench.data.datamodules.one_graph`); the data itself comes from the source
(:mod:`graphbench.data.sources`).

The levels: :mod:`~graphbench.data.datamodules.graph_level`, :mod:`~graphbench.data.datamodules.node_level`,
:mod:`~graphbench.data.datamodules.link_level`; the typed keys of a dataset node:
:mod:`~graphbench.data.datamodules.schema`.
"""

from graphbench.data.datamodules.base import DataModule
from graphbench.data.datamodules.graph_level import GraphLevelDataModule
from graphbench.data.datamodules.link_level import LinkLevelDataModule
from graphbench.data.datamodules.node_level import NodeLevelDataModule

__all__ = ["DataModule", "GraphLevelDataModule", "LinkLevelDataModule", "NodeLevelDataModule"]
