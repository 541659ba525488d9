"""One LightningDataModule per task level; a dataset YAML names one as ``_target_`` and nests its
``source``. They own the processed-data cache, positional encodings, feature normalization and the
loaders; the data itself comes from the source (:mod:`graphbench.data.sources`)."""

from graphbench.data.datamodules.graph_level import GraphLevelDataModule
from graphbench.data.datamodules.link_level import LinkLevelDataModule
from graphbench.data.datamodules.node_level import NodeLevelDataModule

__all__ = ["GraphLevelDataModule", "LinkLevelDataModule", "NodeLevelDataModule"]
