"""The DataModule of link-level tasks: labelled node pairs in many graphs, or in one graph whose
edges are split (OGB's link property prediction)."""

from __future__ import annotations

import os
from typing import ClassVar

from torch import Tensor
from torch_geometric.transforms import BaseTransform

from graphbench.data.datamodules.base import COMMON_KEYS, DataModule
from graphbench.data.datamodules.many_graphs import MANY_GRAPHS_KEYS, ManyGraphs, many_graphs_layout
from graphbench.data.datamodules.one_graph import ONE_GRAPH_LINK_KEYS, SPLIT_EDGES, VAL_EDGE_ATTR, OneGraphLinks, one_graph_only
from graphbench.data.info import Level
from graphbench.data.samplers.base import Sampler
from graphbench.data.sources.base import Source
from graphbench.run.errors import ConfigError

__all__ = ["SPLIT_EDGES", "VAL_EDGE_ATTR", "LinkLevelDataModule"]


class LinkLevelDataModule(DataModule):
    r"""Link prediction and edge classification, on either layout, chosen once from ``source.one_graph``:

    **Many graphs** (e.g. PCQM-Contact, TSP): every graph carries its labelled pairs
    (``edge_label_index``, ``edge_label``, a global ``edge_label_id``);
    :class:`~graphbench.data.datamodules.many_graphs.ManyGraphs` batches ``batch_size`` graphs, with
    all their pairs (so ``dataset.batch_size`` means graphs per batch here too, not pairs).

    **One graph** (e.g. ogbl-collab): :class:`~graphbench.data.datamodules.one_graph.OneGraphLinks`
    takes ``eval_batch_size``, ``use_val_edges_as_input`` and the ``sampler``, whose ``batch_size`` is
    the positive training pairs per step; ``dataset.batch_size`` must be absent. :attr:`graph` is the
    set-up message-passing graph.
    """

    level: ClassVar[Level] = "link"
    config_keys: ClassVar[tuple[str, ...]] = (*COMMON_KEYS, *MANY_GRAPHS_KEYS, *ONE_GRAPH_LINK_KEYS)
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
        split: str = "official",
        provenance: str = "",
        download: bool = False,
        feature_norm: str = "none",
        batch_on_device: bool = False,
        eval_batch_size: int | None = None,
        use_val_edges_as_input: bool | None = None,
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
            split=split,
            provenance=provenance,
            download=download,
            feature_norm=feature_norm,
        )
        self._layout: OneGraphLinks | ManyGraphs
        if not source.one_graph:
            if eval_batch_size is not None or use_val_edges_as_input:
                key = "eval_batch_size" if eval_batch_size is not None else "use_val_edges_as_input"
                raise ConfigError(f"dataset.{key} applies to one-graph link datasets; {name} has its pairs in many graphs")
            self._layout = many_graphs_layout(name, batch_size, batch_on_device, sampler, label_nodes=False)
            return
        one_graph_only(name, batch_size, batch_on_device)
        self._layout = OneGraphLinks(
            eval_batch_size=eval_batch_size, use_val_edges_as_input=bool(use_val_edges_as_input), sampler=sampler
        )

    @property
    def split_edges(self) -> dict[str, Tensor]:
        """The split's pairs of a set-up one-graph dataset (:data:`SPLIT_EDGES`)."""
        return self._layout.split_edges if isinstance(self._layout, OneGraphLinks) else {}
