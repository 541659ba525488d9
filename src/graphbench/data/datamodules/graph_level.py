"""The DataModule every graph-level dataset family derives from."""
from __future__ import annotations

import os
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

import lightning as L
import torch
from torch import Tensor
from torch.utils.data import DataLoader
from torch_geometric.transforms import BaseTransform

from graphbench.data.store.batching import graph_loader
from graphbench.data.store.cache import cache_key, load_or_build
from graphbench.data.store.graph_store import GraphStore
from graphbench.info import DatasetInfo, FeatureSpec
from graphbench.errors import ConfigError, DataError
from graphbench.transforms.channelwise import ChannelwiseNorm

SPLITS: tuple[str, ...] = ("train", "val", "test")
#: input-feature normalizations: ``channelwise`` standardizes every dense node/edge feature channel
#: with training-split mean and std (the LRGB reassessment, Tönshoff et al. 2023, on superpixels)
FEATURE_NORMS: tuple[str, ...] = ("none", "channelwise")


class GraphDataModule(L.LightningDataModule, ABC):
    r"""A graph-level dataset with a fixed train/val/test split.

    Subclasses implement :meth:`build` (raw files -> collated graphs + split indices) and
    :attr:`info`. The dataset's YAML states its ``task_type``, ``metric`` (and whether higher is
    better), ``split`` and ``source``. The processed dataset is cached in ``cache_dir`` (atomically, under a lock); a
    positional-encoding ``pe_transform`` is applied once to every graph and cached beside it, keyed
    by the transform's ``repr``.
    """

    #: bump when processing changes, so stale caches are never read
    version: str = "1"

    def __init__(
        self,
        *,
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
        source: str = "",
        feature_norm: str = "none",
    ) -> None:
        super().__init__()
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"dataset.batch_size must be a positive integer, got {batch_size!r}")
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ConfigError(f"dataset.num_workers must be a non-negative integer, got {num_workers!r}")
        self.name = name
        self.data_dir = Path(data_dir)
        self.cache_dir = Path(cache_dir)
        self.batch_size = batch_size
        self.num_workers = num_workers
        self.pe_transform = pe_transform
        self.task_type = task_type
        self.metric = metric
        self.higher_is_better = higher_is_better
        self.split = split
        self.source = source
        if feature_norm not in FEATURE_NORMS:
            raise ConfigError(f"dataset.feature_norm={feature_norm!r} is not one of {list(FEATURE_NORMS)}")
        self.feature_norm = feature_norm
        self.dataset: GraphStore | None = None
        self.splits: dict[str, Tensor] = {}

    @property
    @abstractmethod
    def info(self) -> DatasetInfo:
        """Task type, output size, metric and input feature kinds (see :meth:`make_info`)."""

    def make_info(self, num_outputs: int, node_features: FeatureSpec, edge_features: FeatureSpec | None, level: str = "graph") -> DatasetInfo:
        """The facts the dataset's YAML states (task type, metric) joined with those its class knows."""
        return DatasetInfo(
            name=self.name,
            level=level,  # type: ignore[arg-type]
            task_type=self.task_type,  # type: ignore[arg-type]
            num_outputs=num_outputs,
            metric=self.metric,
            higher_is_better=self.higher_is_better,
            node_features=node_features,
            edge_features=edge_features,
        )

    @abstractmethod
    def build(self) -> tuple[GraphStore, dict[str, Tensor]]:
        """Read raw files (or generate) and return the collated dataset and its split indices."""

    def cache_params(self) -> tuple[Any, ...]:
        """Everything besides the class and version that determines the processed content."""
        return (self.name,)

    def expected_num_graphs(self) -> int | None:
        """How many graphs :meth:`build` produces, where that is known before building (it is
        printed when a build starts); ``None`` when only the raw files tell."""
        return None

    def _build_label(self) -> str:
        count = self.expected_num_graphs()
        return self.name if count is None else f"{self.name} ({count:,} graphs)"

    def _cache_path(self, *extra: object) -> Path:
        key = cache_key(type(self).__qualname__, self.version, *self.cache_params(), *extra)
        return self.cache_dir / f"{self.name}-{key}.pt"

    def _processed(self) -> dict[str, Any]:
        def build() -> dict[str, Any]:
            store, splits = self.build()
            return {"store": store.state(), "splits": splits}

        return load_or_build(self._cache_path(), build, self._build_label())

    def _with_pe(self) -> dict[str, Any]:
        base = self._processed()
        if self.pe_transform is None:
            return base
        from graphbench.transforms.precompute import precompute

        def build() -> dict[str, Any]:
            store = GraphStore.from_state(base["store"])
            graphs = [store.get(i) for i in range(len(store))]
            for graph in graphs:
                del graph.idx
            return {"store": GraphStore.from_list(precompute(graphs, self.pe_transform)).state(), "splits": base["splits"]}

        label = f"{self._build_label()} + {type(self.pe_transform).__name__}"
        return load_or_build(self._cache_path("pe", repr(self.pe_transform)), build, label)

    def prepare_data(self) -> None:
        self._with_pe()

    def setup(self, stage: str | None = None) -> None:
        if self.dataset is not None:
            return
        processed = self._with_pe()
        self.dataset = GraphStore.from_state(processed["store"])
        self.splits = {k: torch.as_tensor(v, dtype=torch.long) for k, v in processed["splits"].items()}
        for split in SPLITS:
            if split not in self.splits:
                raise DataError(f"{self.name}: split '{split}' missing; found {sorted(self.splits)}")
        if self.feature_norm == "channelwise":
            # statistics of the training split only, applied to every split (a per-row map)
            norm = ChannelwiseNorm.fit_collated(self.dataset._data, self.dataset.slices, self.splits["train"])
            self.dataset = GraphStore(norm(self.dataset._data), self.dataset.slices)

    def split_dataset(self, split: str) -> GraphStore:
        if self.dataset is None:
            self.setup()
        assert self.dataset is not None
        return self.dataset.index_select(self.splits[split])

    def _loader(self, split: str, shuffle: bool) -> DataLoader:
        return graph_loader(self.split_dataset(split), self.batch_size, shuffle, self.num_workers)

    def train_dataloader(self) -> DataLoader:
        return self._loader("train", shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return self._loader("val", shuffle=False)

    def test_dataloader(self) -> DataLoader:
        return self._loader("test", shuffle=False)
