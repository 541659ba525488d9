"""The DataModule of node-level tasks: one graph whose nodes are split (transductive), or many graphs
whose nodes are all labelled and which are split by graph (inductive)."""

from __future__ import annotations

from typing import ClassVar

from torch import Tensor
from torch_geometric.data import Batch

from graphbench.data.datamodules.base import DataModule, Layout
from graphbench.data.datamodules.many_graphs import ManyGraphs, many_graphs_layout
from graphbench.data.datamodules.one_graph import OneGraphNodes, row_normalize
from graphbench.data.datamodules.schema import LayoutConfig, ManyGraphsConfig, OneGraphNodesConfig
from graphbench.data.info import Level
from graphbench.data.samplers.base import Sampler
from graphbench.data.sources.base import OneGraphNodeSource
from graphbench.vocabulary.errors import ConfigError

__all__ = ["NodeLevelDataModule", "row_normalize"]


class NodeLevelDataModule(DataModule):
    r"""Node classification (or regression), on either layout, chosen once from ``source.one_graph``:

    **One graph** (e.g. Cora, Texas, WikiCS): :class:`~graphbench.data.datamodules.one_graph.OneGraphNodes`,
    configured by a :class:`~graphbench.data.datamodules.schema.OneGraphNodesConfig` (``split_index``,
    ``split_seed``, ``split_fractions``, ``normalize_features``), takes ``dataset.split`` (the source's
    fixed split, ``random`` or ``igb``) and the ``sampler``; mini-batch sizes are ``sampler.``'s.
    :attr:`graph` is the set-up graph, :attr:`full_batch` it collated once.

    **Many graphs** (e.g. PATTERN, CLUSTER, PascalVOC-SP): every node is labelled and the graphs are
    split; :class:`~graphbench.data.datamodules.many_graphs.ManyGraphs` batches ``batch_size`` graphs
    (a :class:`~graphbench.data.datamodules.schema.ManyGraphsConfig`), whose nodes carry an all-true
    ``{split}_mask`` and ``n_id``. ``split`` only describes the split and the sampler must be ``full``.
    """

    level: ClassVar[Level] = "node"
    layouts: ClassVar[tuple[type[LayoutConfig], ...]] = (ManyGraphsConfig, OneGraphNodesConfig)
    _layout: OneGraphNodes | ManyGraphs

    def make_layout(self, layout: LayoutConfig | None, sampler: Sampler | None) -> Layout:
        source = self.source
        if not source.one_graph:
            return many_graphs_layout(self.name, self.layout_of(ManyGraphsConfig, layout), sampler, level=self.level)
        if not isinstance(source, OneGraphNodeSource):
            raise ConfigError(f"{type(source).__name__}: a one-graph node source derives from OneGraphNodeSource")
        config = self.layout_of(OneGraphNodesConfig, layout)
        nodes = OneGraphNodes(
            source=source,
            name=self.name,
            split=self.dataset_config.split,
            split_index=config.split_index,
            split_seed=config.split_seed,
            split_fractions=config.split_fractions,
            normalize_features=config.normalize_features,
            sampler=sampler,
        )
        self.split = nodes.split
        return nodes

    @property
    def full_batch(self) -> Batch | None:
        """The set-up graph collated once (one-graph datasets)."""
        return self._layout.full_batch if isinstance(self._layout, OneGraphNodes) else None

    def use_split_masks(self, train_mask: Tensor, val_mask: Tensor, test_mask: Tensor) -> None:
        """Replace the split of the set-up one graph by these boolean node masks (e.g. the node subsets
        of :func:`graphbench.analysis.subset_training.train_on_nodes`); the loaders yield the graph with them."""
        if not isinstance(self._layout, OneGraphNodes):
            raise ConfigError(f"{self.name}: use_split_masks needs a set-up one-graph (transductive) dataset")
        self._layout.use_split_masks(train_mask, val_mask, test_mask)
