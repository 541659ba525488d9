"""Node classification: one transductive graph with boolean split masks, or many graphs whose nodes
are all labelled (the split is over graphs)."""
from __future__ import annotations

from abc import abstractmethod
from typing import Any

import torch
from torch import Tensor
from torch.utils.data import DataLoader
from torch_geometric.data import Batch, Data

from graphbench.data.datamodules.graph_level import SPLITS, GraphDataModule
from graphbench.data.store.full_batch import full_batch_loader
from graphbench.data.store.graph_store import GraphStore
from graphbench.info import DatasetInfo, FeatureSpec
from graphbench.errors import ConfigError, DataError


def random_split_masks(num_nodes: int, fractions: tuple[float, float, float], seed: int) -> dict[str, Tensor]:
    """Boolean ``{split}_mask`` vectors of a uniformly random split of the nodes into the given
    train/val/test fractions (the test split takes the remainder). Deterministic given ``seed``."""
    if len(fractions) != 3 or any(f < 0 for f in fractions) or sum(fractions) > 1 + 1e-9:
        raise ConfigError(f"dataset.split_fractions must be three non-negative numbers summing to <= 1, got {list(fractions)}")
    perm = torch.randperm(num_nodes, generator=torch.Generator().manual_seed(int(seed)))
    n_train, n_val = int(round(fractions[0] * num_nodes)), int(round(fractions[1] * num_nodes))
    parts = {"train": perm[:n_train], "val": perm[n_train : n_train + n_val], "test": perm[n_train + n_val :]}
    masks = {}
    for split, index in parts.items():
        mask = torch.zeros(num_nodes, dtype=torch.bool)
        mask[index] = True
        masks[f"{split}_mask"] = mask
    return masks


def row_normalize(x: Tensor) -> Tensor:
    r"""Row-normalized features :math:`x_i / \sum_j x_{ij}` (rows summing to 0 are left as they are),
    the preprocessing of Kipf & Welling (2017) (PyG's ``NormalizeFeatures``)."""
    return x / x.sum(dim=-1, keepdim=True).clamp(min=1.0)


class NodeDataModule(GraphDataModule):
    r"""A single graph whose nodes are split into train/val/test by boolean masks (transductive).

    Subclasses implement :meth:`read_graph` (raw files -> one ``Data`` with ``x``, ``edge_index``,
    ``y`` and ``train_mask``/``val_mask``/``test_mask``). The masks are 1-D, or 2-D ``[N, S]`` when
    the raw data ships ``S`` fixed splits (Geom-GCN's 10, WikiCS's 20); ``split_index`` picks one.
    ``split: random`` replaces the shipped split by a random ``split_fractions`` split of the nodes
    drawn with ``split_seed``. Every loader yields the whole graph (full batch); the task module
    selects the nodes of its split with ``batch[f"{split}_mask"]``.
    """

    #: the name of the split shipped with the raw data (the YAML's default ``split``)
    fixed_split: str = "official"
    #: how many fixed splits the raw data ships (masks [N, S]); 1 = one split (1-D masks)
    num_fixed_splits: int = 1

    def __init__(
        self,
        *,
        split_index: int = 0,
        split_seed: int = 0,
        split_fractions: tuple[float, float, float] | list[float] = (0.6, 0.2, 0.2),
        normalize_features: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        valid = (self.fixed_split, "random")
        if self.split not in valid:
            raise ConfigError(f"dataset.split={self.split!r} is not valid for {self.name}; valid: {list(valid)}")
        if self.split == self.fixed_split and (
            isinstance(split_index, bool) or not isinstance(split_index, int) or not 0 <= split_index < self.num_fixed_splits
        ):
            raise ConfigError(
                f"dataset.split_index={split_index!r} is out of range for {self.name}: it ships {self.num_fixed_splits} "
                f"fixed split(s), so split_index must be an integer in 0..{self.num_fixed_splits - 1}"
            )
        self.split_index = split_index
        self.split_seed = split_seed
        self.split_fractions = tuple(float(f) for f in split_fractions)
        if self.split == "random":
            random_split_masks(1, self.split_fractions, 0)  # validates the fractions now, not at setup
        self.normalize_features = normalize_features
        self.graph: Data | None = None
        self.full_batch: Batch | None = None

    @abstractmethod
    def read_graph(self) -> Data:
        """Read the raw files into one graph with ``x``, ``edge_index``, ``y`` and split masks."""

    def build(self) -> tuple[GraphStore, dict[str, Tensor]]:
        graph = self.read_graph()
        for split in SPLITS:
            mask = graph[f"{split}_mask"]
            expected = 1 if self.num_fixed_splits == 1 else 2
            if mask.dtype != torch.bool or mask.dim() != expected or mask.size(0) != graph.num_nodes:
                raise DataError(f"{self.name}: {split}_mask must be a boolean tensor with {graph.num_nodes} rows, got {tuple(mask.shape)} {mask.dtype}")
        one = torch.zeros(1, dtype=torch.long)
        return GraphStore.from_list([graph]), {split: one for split in SPLITS}

    def _select_split(self, graph: Data) -> Data:
        if self.split == "random":
            masks = random_split_masks(graph.num_nodes, self.split_fractions, self.split_seed)  # type: ignore[arg-type]
        else:
            masks = {}
            for split in SPLITS:
                mask = graph[f"{split}_mask"]
                masks[f"{split}_mask"] = mask[:, self.split_index] if mask.dim() == 2 else mask
        for key, mask in masks.items():
            graph[key] = mask
        return graph

    def setup(self, stage: str | None = None) -> None:
        if self.graph is not None:
            return
        super().setup(stage)
        assert self.dataset is not None
        graph = self.dataset.get(0)
        del graph.idx
        graph = self._select_split(graph)
        if self.normalize_features:
            graph.x = row_normalize(graph.x)
        self.graph = graph
        self.dataset = GraphStore.from_list([graph])
        self.full_batch = Batch.from_data_list([graph])

    def _loader(self, split: str, shuffle: bool) -> DataLoader:
        if self.full_batch is None:
            self.setup()
        assert self.full_batch is not None
        return full_batch_loader(self.full_batch)

    @property
    def num_classes(self) -> int:
        if self.graph is None:
            self.setup()
        assert self.graph is not None
        return int(self.graph.y.max()) + 1

    def feature_spec(self) -> FeatureSpec:
        assert self.graph is not None
        return FeatureSpec("dense", dim=int(self.graph.x.size(1)))

    @property
    def info(self) -> DatasetInfo:
        num_classes = self.num_classes
        return self.make_info(num_outputs=num_classes, node_features=self.feature_spec(), edge_features=None, level="node")


class SplitNodeMask:
    """Transform for many-graph node classification: every node of a graph in ``split`` is labelled, so
    ``{split}_mask`` is all true; ``n_id`` is each node's position in the whole collated dataset (so
    that predictions of different graphs never share an index)."""

    def __init__(self, split: str, node_ptr: Tensor) -> None:
        self.split = split
        self.node_ptr = node_ptr

    def __call__(self, data: Data) -> Data:
        data[f"{self.split}_mask"] = torch.ones(data.num_nodes, dtype=torch.bool)
        data.n_id = self.node_ptr[data.idx] + torch.arange(data.num_nodes)
        return data

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.split!r})"


class InductiveNodeDataModule(GraphDataModule):
    """Many graphs, every node labelled, split by graphs (e.g. PATTERN, CLUSTER): each loader adds the
    all-true ``{split}_mask`` and global ``n_id`` the node-level task module reads."""

    def split_dataset(self, split: str) -> GraphStore:
        store = super().split_dataset(split)
        store.transform = SplitNodeMask(split, store.slices["x"])
        return store
