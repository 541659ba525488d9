"""The DataModule of node-level tasks: one graph whose nodes are split (transductive), or many graphs
whose nodes are all labelled and which are split by graph (inductive)."""

from __future__ import annotations

import os
from typing import ClassVar

from torch import Tensor
from torch_geometric.data import Batch
from torch_geometric.transforms import BaseTransform

from graphbench.data.datamodules.base import COMMON_KEYS, DataModule
from graphbench.data.datamodules.many_graphs import MANY_GRAPHS_KEYS, ManyGraphs, many_graphs_layout
from graphbench.data.datamodules.one_graph import ONE_GRAPH_NODE_KEYS, OneGraphNodes, one_graph_only, row_normalize
from graphbench.data.info import Level
from graphbench.data.samplers.base import Sampler
from graphbench.data.sources.base import OneGraphNodeSource, Source
from graphbench.run.errors import ConfigError

__all__ = ["NodeLevelDataModule", "row_normalize"]


class NodeLevelDataModule(DataModule):
    r"""Node classification (or regression), on either layout, chosen once from ``source.one_graph``:

    **One graph** (e.g. Cora, Texas, WikiCS): :class:`~graphbench.data.datamodules.one_graph.OneGraphNodes`
    takes ``split`` (the source's fixed split, ``random`` or ``igb``), ``split_index``, ``split_seed``,
    ``split_fractions``, ``normalize_features`` and the ``sampler``; ``batch_size`` must be absent
    (mini-batch sizes are ``sampler.``'s). :attr:`graph` is the set-up graph, :attr:`full_batch` it
    collated once.

    **Many graphs** (e.g. PATTERN, CLUSTER, PascalVOC-SP): every node is labelled and the graphs are
    split; :class:`~graphbench.data.datamodules.many_graphs.ManyGraphs` batches ``batch_size`` graphs,
    whose nodes carry an all-true ``{split}_mask`` and ``n_id``. ``split`` only describes the split,
    the one-graph keys do not apply and the sampler must be ``full``.
    """

    level: ClassVar[Level] = "node"
    config_keys: ClassVar[tuple[str, ...]] = (*COMMON_KEYS, *MANY_GRAPHS_KEYS, *ONE_GRAPH_NODE_KEYS)
    takes_sampler: ClassVar[bool] = True

    def __init__(
        self,
        *,
        source: Source,
        name: str,
        data_dir: str | os.PathLike,
        cache_dir: str | os.PathLike,
        batch_size: int | None = None,
        num_workers: int = 0,
        task_type: str,
        metric: str,
        higher_is_better: bool,
        pe_transform: BaseTransform | None = None,
        split: str | None = None,
        provenance: str = "",
        download: bool = False,
        feature_norm: str = "none",
        batch_on_device: bool = False,
        split_index: int | None = None,
        split_seed: int | None = None,
        split_fractions: tuple[float, float, float] | list[float] | None = None,
        normalize_features: bool | None = None,
        sampler: Sampler | None = None,
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
            split=split or "official",
            provenance=provenance,
            download=download,
            feature_norm=feature_norm,
        )
        one_graph_keys = {
            "split_index": split_index,
            "split_seed": split_seed,
            "split_fractions": split_fractions,
            "normalize_features": normalize_features,
        }
        self._layout: OneGraphNodes | ManyGraphs
        if not source.one_graph:
            given = [key for key, value in one_graph_keys.items() if value is not None]
            if given:
                raise ConfigError(f"dataset.{given[0]} applies to one-graph (transductive) datasets; {name} is split by graphs")
            self._layout = many_graphs_layout(name, batch_size, batch_on_device, sampler, label_nodes=True)
            return
        if not isinstance(source, OneGraphNodeSource):
            raise ConfigError(f"{type(source).__name__}: a one-graph node source derives from OneGraphNodeSource")
        one_graph_only(name, batch_size, batch_on_device)
        given = {key: value for key, value in one_graph_keys.items() if value is not None}
        self._layout = OneGraphNodes(source=source, name=name, split=split, sampler=sampler, **given)  # type: ignore[arg-type]
        self.split = self._layout.split

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
