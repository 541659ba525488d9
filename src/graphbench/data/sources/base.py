r"""What a dataset source is: pure data, no Lightning.

A source states its facts and turns raw files (or a generator) into a collated
:class:`~graphbench.data.store.graph_store.GraphStore` plus split indices. Everything else — the
processed-data cache, positional encodings, feature normalization, splits chosen at run time,
loaders — belongs to the DataModule of its task level (:mod:`graphbench.data.datamodules`), which a
dataset YAML names as ``_target_``, with the source nested under ``source:``.

A new dataset is one subclass of :class:`Source` (or :class:`OneGraphNodeSource`) and one YAML::

    class MySource(Source):
        level = "graph"

        def facts(self, store=None):
            return DataFacts(num_outputs=1, node_features=FeatureSpec("dense", dim=3), edge_features=None)

        def build(self, raw):
            (path,) = raw.locate([RawFile("my/raw/file.pt")], "MyDataset")
            ...
            return GraphStore(*collate(edge_index, {"x": xs}, graph={"y": y})), {"train": ..., "val": ..., "test": ...}
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import torch
from torch import Tensor
from torch_geometric.data import Data

from graphbench.data.info import DataFacts, FeatureSpec, Level
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.store.graph_store import GraphStore
from graphbench.vocabulary.errors import DataError
from graphbench.vocabulary.splits import SPLITS


class Source(ABC):
    """A dataset source. Subclasses set :attr:`level` (and :attr:`one_graph`), implement
    :meth:`build` and :meth:`facts`, and list in :meth:`cache_params` every constructor argument
    that changes what :meth:`build` returns."""

    #: the task level: ``graph``, ``node`` or ``link`` (must match the DataModule's)
    level: ClassVar[Level] = "graph"
    #: True: one graph whose nodes (or edges) are split (transductive); False: many graphs, split by graph
    one_graph: ClassVar[bool] = False
    #: bump when :meth:`build`'s output changes, so that stale caches are never read
    version: ClassVar[str] = "1"

    @abstractmethod
    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, Tensor]]:
        """Read the raw files (located with ``raw.locate``) or generate the data, and return the
        collated store and the ``train``/``val``/``test`` index tensors into it."""

    @abstractmethod
    def facts(self, store: GraphStore | None = None) -> DataFacts | None:
        """The number of outputs and the input feature kinds. ``store`` is the processed store once
        the DataModule is set up, ``None`` before; a source whose facts can only be read from the data
        (e.g. the number of classes of a raw label file) returns ``None`` when ``store`` is ``None``."""

    def cache_params(self) -> tuple[Any, ...]:
        """Everything besides the class and :attr:`version` that determines what :meth:`build` returns."""
        return ()

    def check_raw_files(self, raw: RawRoot) -> None:  # noqa: B027 - an optional hook, a no-op unless overridden
        """Checks that run even when a processed cache exists (e.g. the MD5 of files whose published
        checksums guard a benchmark); none by default."""

    def expected_num_graphs(self) -> int | None:
        """How many graphs :meth:`build` produces, where that is known before building (it is logged
        when a build starts); ``None`` when only the raw files tell."""
        return None


class OneGraphNodeSource(Source):
    r"""A single graph whose nodes are split into train/val/test by boolean masks (transductive).

    Subclasses implement :meth:`read_graph` (raw files -> one ``Data`` with ``x``, ``edge_index``,
    ``y`` and ``train_mask``/``val_mask``/``test_mask``). The masks are 1-D, or 2-D ``[N, S]`` when
    the raw data ships ``S`` fixed splits (Geom-GCN's 10, WikiCS's 20); the DataModule picks one with
    ``split_index``, or draws a random split instead. The number of classes and the feature width are
    read from the graph, so :meth:`facts` needs the set-up store.
    """

    level = "node"
    one_graph = True
    #: the name of the split shipped with the raw data (the YAML's default ``split``)
    fixed_split: ClassVar[str] = "official"
    #: how many fixed splits the raw data ships (masks [N, S]); 1 = one split (1-D masks)
    num_fixed_splits: ClassVar[int] = 1

    @abstractmethod
    def read_graph(self, raw: RawRoot) -> Data:
        """Read the raw files into one graph with ``x``, ``edge_index``, ``y`` and split masks."""

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, Tensor]]:
        graph = self.read_graph(raw)
        expected = 1 if self.num_fixed_splits == 1 else 2
        for split in SPLITS:
            mask = graph[f"{split}_mask"]
            if mask.dtype != torch.bool or mask.dim() != expected or mask.size(0) != graph.num_nodes:
                raise DataError(
                    f"{type(self).__name__}: {split}_mask must be a boolean tensor with {graph.num_nodes} rows, got {tuple(mask.shape)} {mask.dtype}"
                )
        one = torch.zeros(1, dtype=torch.long)
        return GraphStore.from_list([graph]), {split: one for split in SPLITS}

    def facts(self, store: GraphStore | None = None) -> DataFacts | None:
        if store is None:
            return None
        data = store.collated
        return DataFacts(
            num_outputs=int(data.y.max()) + 1, node_features=FeatureSpec("dense", dim=int(data.x.size(1))), edge_features=None
        )
