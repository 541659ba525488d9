"""The DataModule of graph-level tasks, and the plumbing every level shares: cache, PE, feature norm."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

import lightning as L
import torch
from torch import Tensor
from torch.utils.data import DataLoader
from torch_geometric.transforms import BaseTransform

from graphbench.data.io.raw_manifest import RawManifest, load_or_build_from_raw
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.base import Source
from graphbench.data.store.loader import GraphIds, graph_loader
from graphbench.data.store.cache import cache_key, load_or_build
from graphbench.data.store.device_store import DeviceStore
from graphbench.data.store.graph_store import GraphStore
from graphbench.data.store.sharding import Shard
from graphbench.run.errors import ConfigError, DataError
from graphbench.data.info import DatasetInfo, Level
from graphbench.run.record import SPLITS
from graphbench.transforms.channelwise import ChannelwiseNorm

#: input-feature normalizations: ``channelwise`` standardizes every dense node/edge feature channel
#: with training-split mean and std (the LRGB reassessment, Tönshoff et al. 2023, on superpixels)
FEATURE_NORMS: tuple[str, ...] = ("none", "channelwise")


class GraphLevelDataModule(L.LightningDataModule):
    r"""Graph-level tasks: many graphs with a fixed train/val/test split of the graphs, in mini-batches.

    The data comes from ``source`` (a :class:`~graphbench.data.sources.base.Source`: raw files ->
    collated store + split indices); the DataModule owns everything around it:

    - the processed-data cache in ``cache_dir`` (written atomically, under a lock), keyed by the
      source's class, version, :meth:`~Source.cache_params` and the MD5s of the raw files its build
      located; every run checks those raw files under ``data_dir`` before it uses the cache
      (:mod:`graphbench.data.io.raw_manifest`);
    - the raw files under ``data_dir`` (read-only), with missing files downloaded only when
      ``download`` is true (:class:`~graphbench.data.io.raw_root.RawRoot`);
    - a positional-encoding ``pe_transform``, applied once to every graph and cached beside the
      processed data, keyed by the transform's ``repr``;
    - ``feature_norm``: ``channelwise`` standardizes dense features with training-split statistics;
    - the loaders (bulk mini-batches of ``batch_size`` graphs), gathered on the CPU, or with
      ``batch_on_device`` on the training device from a copy of the dataset kept there
      (:class:`~graphbench.data.store.device_store.DeviceStore`): the loaders then yield only each
      batch's graph ids, and no batch crosses from host to device.

    :attr:`info` joins the YAML's protocol (``task_type``, ``metric``, ``higher_is_better``) with the
    source's facts. Facts a source knows without data are available right away; facts it reads from
    the data (e.g. the number of classes of a TU dataset) only after :meth:`setup`.
    ``split`` (graph level) and ``provenance`` describe the dataset for people and are not read.

    Node- and link-level DataModules (:mod:`~graphbench.data.datamodules.node_level`,
    :mod:`~graphbench.data.datamodules.link_level`) derive from this class.
    """

    #: the task level of the sources this DataModule serves
    level: ClassVar[Level] = "graph"

    def __init__(
        self,
        *,
        source: Source,
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
        provenance: str = "",
        download: bool = False,
        feature_norm: str = "none",
        batch_on_device: bool = False,
    ) -> None:
        super().__init__()
        if not isinstance(source, Source):
            raise ConfigError(f"dataset.source must build a graphbench Source, got {type(source).__name__}")
        if source.level != self.level:
            raise ConfigError(
                f"dataset '{name}': its source {type(source).__name__} is {source.level}-level, but {type(self).__name__} serves "
                f"{self.level}-level sources; set dataset._target_ to the {source.level}-level DataModule"
            )
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"dataset.batch_size must be a positive integer, got {batch_size!r}")
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ConfigError(f"dataset.num_workers must be a non-negative integer, got {num_workers!r}")
        if feature_norm not in FEATURE_NORMS:
            raise ConfigError(f"dataset.feature_norm={feature_norm!r} is not one of {list(FEATURE_NORMS)}")
        if not isinstance(batch_on_device, bool):
            raise ConfigError(f"dataset.batch_on_device must be true or false, got {batch_on_device!r}")
        if batch_on_device and self.level != "graph":
            raise ConfigError(
                f"dataset.batch_on_device=true gathers graph-level mini-batches on the device; {name} is a {self.level}-level "
                "dataset, whose batches are built on the CPU: set dataset.batch_on_device=false"
            )
        self.source = source
        self.name = name
        self.raw = RawRoot(data_dir, download)
        self.cache_dir = Path(cache_dir)
        self.batch_size = batch_size
        self.num_workers = num_workers
        self.pe_transform = pe_transform
        self.task_type = task_type
        self.metric = metric
        self.higher_is_better = higher_is_better
        self.split = split
        self.provenance = provenance
        self.feature_norm = feature_norm
        self.batch_on_device = batch_on_device
        self._on_device: dict[torch.device, DeviceStore] = {}
        self.dataset: GraphStore | None = None
        self.splits: dict[str, Tensor] = {}
        #: the digest of the MD5s of the raw files the processed data was built from (set by _processed)
        self._raw_key: str | None = None
        #: the record of those raw files (set by _processed, read by raw_file_md5s)
        self._raw_record: Path | None = None

    @property
    def data_dir(self) -> Path:
        return self.raw.data_dir

    @property
    def info(self) -> DatasetInfo:
        """Task type, output size, metric and input feature kinds. Raises a :class:`DataError` before
        :meth:`setup` when the source reads its facts from the data."""
        facts = self.source.facts(self.dataset)
        if facts is None:
            raise DataError(
                f"{self.name}: {type(self.source).__name__} reads its facts (outputs, feature widths) from the data; "
                "call setup() before reading info"
            )
        return DatasetInfo(
            name=self.name,
            level=self.level,
            task_type=self.task_type,  # type: ignore[arg-type]
            num_outputs=facts.num_outputs,
            metric=self.metric,
            higher_is_better=self.higher_is_better,
            node_features=facts.node_features,
            edge_features=facts.edge_features,
        )

    # -- the processed data: built from the source once, cached ----------------------------------

    def _build_label(self) -> str:
        count = self.source.expected_num_graphs()
        return self.name if count is None else f"{self.name} ({count:,} graphs)"

    def _source_key(self) -> str:
        source = self.source
        return cache_key(type(source).__qualname__, source.version, self.name, *source.cache_params())

    def _cache_path(self, *extra: object, raw_key: str | None = None) -> Path:
        """The cache file of the processed data (of ``extra``: PE, sampler precomputations): its key
        covers the source, its parameters and the MD5s of the raw files it was built from
        (``raw_key``, by default the one :meth:`_processed` found)."""
        key = cache_key(self._source_key(), raw_key or self._raw_key, *extra)
        return self.cache_dir / f"{self.name}-{key}.pt"

    def _processed(self) -> dict[str, Any]:
        self.source.check_raw_files(self.raw)

        def build(raw: RawRoot) -> dict[str, Any]:
            store, splits = self.source.build(raw)
            return {"store": store.state(), "splits": splits}

        # the raw files a build of this source read are checked under data_dir before any cache is used
        record = self._raw_record = self.cache_dir / f"{self.name}-{self._source_key()}.raw.json"
        processed, self._raw_key = load_or_build_from_raw(
            record, lambda raw_key: self._cache_path(raw_key=raw_key), self.raw, build, self._build_label()
        )
        return processed

    def raw_file_md5s(self) -> dict[str, str]:
        """``{path under data_dir: MD5}`` of every raw file the processed data was built from, as this
        run checked them (empty for a source that generates its data): what ``results.json`` records
        in its provenance. Raises a :class:`DataError` before :meth:`prepare_data` or :meth:`setup`."""
        if self._raw_record is None:
            raise DataError(f"{self.name}: call prepare_data() or setup() before raw_file_md5s()")
        return RawManifest(self._raw_record).file_md5s(self.data_dir)

    def _with_pe(self) -> dict[str, Any]:
        base = self._processed()
        if self.pe_transform is None:
            return base
        from graphbench.data.store.encodings import precompute_store

        def build() -> dict[str, Any]:
            store = precompute_store(GraphStore.from_state(base["store"]), self.pe_transform)
            return {"store": store.state(), "splits": base["splits"]}

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
            norm = ChannelwiseNorm.fit_collated(self.dataset.collated, self.dataset.slices, self.splits["train"])
            self.dataset = GraphStore(norm(self.dataset.collated), self.dataset.slices)
        if self.batch_on_device and self.dataset.plan() is None:
            raise ConfigError(
                f"dataset.batch_on_device=true: {self.name} has attributes that only PyG's per-graph collate batches "
                "(see graphbench.data.store.batching.batching_plan); set dataset.batch_on_device=false"
            )

    # -- loaders --------------------------------------------------------------------------------

    def split_dataset(self, split: str) -> GraphStore:
        if self.dataset is None:
            self.setup()
        assert self.dataset is not None
        return self.dataset.index_select(self.splits[split])

    @property
    def shard(self) -> Shard | None:
        """This process's place in a data-parallel run (from the attached Trainer); ``None`` outside one."""
        trainer = self.trainer
        return Shard(trainer.global_rank, trainer.world_size) if trainer is not None else None

    def check_devices(self, world_size: int) -> None:
        """Raises a :class:`ConfigError` when this dataset cannot be split over ``world_size``
        data-parallel processes (graph-level loaders shard by graph, so they always can)."""

    def _loader(self, split: str, shuffle: bool) -> DataLoader:
        # every rank seeded the same global seed (seed_everything), so all draw the same permutation
        seed = torch.initial_seed()
        store = self.split_dataset(split)
        return graph_loader(store, self.batch_size, shuffle, self.num_workers, self.shard, seed, ids_only=self.batch_on_device)

    def transfer_batch_to_device(self, batch: Any, device: torch.device, dataloader_idx: int) -> Any:
        """A batch's :class:`GraphIds` (``batch_on_device``) become the batch, gathered on ``device``
        from the dataset's copy there (made on first use). Other batches take Lightning's transfer,
        less its walk over every attribute on the CPU: these loaders build CPU batches, which
        ``Data.to("cpu")`` hands back tensor by tensor as they are (about 0.1 ms a step, ~1% of a
        Cora full-batch GCN step on 2 CPU cores)."""
        if isinstance(batch, GraphIds):
            if device not in self._on_device:
                assert self.dataset is not None
                self._on_device[device] = DeviceStore(self.dataset, device)
            return self._on_device[device].batch(batch.ids)
        if device.type == "cpu":
            return batch
        return super().transfer_batch_to_device(batch, device, dataloader_idx)

    def train_dataloader(self) -> DataLoader:
        return self._loader("train", shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return self._loader("val", shuffle=False)

    def test_dataloader(self) -> DataLoader:
        return self._loader("test", shuffle=False)
