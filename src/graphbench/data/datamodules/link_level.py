"""The DataModule of link-level tasks: labelled node pairs in many graphs, or in one graph whose
edges are split (OGB's link property prediction)."""

from __future__ import annotations

from typing import ClassVar

from torch import Tensor

from graphbench.data.datamodules.base import DataModule, Layout
from graphbench.data.datamodules.many_graphs import ManyGraphs, many_graphs_layout
from graphbench.data.datamodules.one_graph import SPLIT_EDGES, VAL_EDGE_ATTR, OneGraphLinks
from graphbench.data.datamodules.schema import LayoutConfig, ManyGraphsConfig, OneGraphLinksConfig
from graphbench.data.info import Level
from graphbench.data.samplers.base import Sampler

__all__ = ["SPLIT_EDGES", "VAL_EDGE_ATTR", "LinkLevelDataModule"]


class LinkLevelDataModule(DataModule):
    r"""Link prediction and edge classification, on either layout, chosen once from ``source.one_graph``:

    **Many graphs** (e.g. PCQM-Contact, TSP): every graph carries its labelled pairs
    (``edge_label_index``, ``edge_label``, a global ``edge_label_id``);
    :class:`~graphbench.data.datamodules.many_graphs.ManyGraphs` batches ``batch_size`` graphs (a
    :class:`~graphbench.data.datamodules.schema.ManyGraphsConfig`), with all their pairs (so
    ``dataset.batch_size`` means graphs per batch here too, not pairs).

    **One graph** (e.g. ogbl-collab): :class:`~graphbench.data.datamodules.one_graph.OneGraphLinks`,
    configured by a :class:`~graphbench.data.datamodules.schema.OneGraphLinksConfig`
    (``eval_batch_size``, ``use_val_edges_as_input``), takes the ``sampler``, whose ``batch_size`` is
    the positive training pairs per step. :attr:`graph` is the set-up message-passing graph.
    """

    level: ClassVar[Level] = "link"
    layouts: ClassVar[tuple[type[LayoutConfig], ...]] = (ManyGraphsConfig, OneGraphLinksConfig)
    _layout: OneGraphLinks | ManyGraphs

    def make_layout(self, layout: LayoutConfig | None, sampler: Sampler | None) -> Layout:
        if not self.source.one_graph:
            return many_graphs_layout(self.name, self.layout_of(ManyGraphsConfig, layout), sampler, level=self.level)
        config = self.layout_of(OneGraphLinksConfig, layout)
        return OneGraphLinks(
            eval_batch_size=config.eval_batch_size, use_val_edges_as_input=config.use_val_edges_as_input, sampler=sampler
        )

    @property
    def split_edges(self) -> dict[str, Tensor]:
        """The split's pairs of a set-up one-graph dataset (:data:`SPLIT_EDGES`)."""
        return self._layout.split_edges if isinstance(self._layout, OneGraphLinks) else {}
