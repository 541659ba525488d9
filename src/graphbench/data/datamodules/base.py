"""What every DataModule shares, whatever its level and its data's layout: the source, the raw files,
the processed-data cache, positional encodings, feature normalization, the facts of :attr:`info` and
the device transfer. How the data is split and batched is its :class:`Layout`'s
(:mod:`~graphbench.data.datamodules.many_graphs`, :mod:`~graphbench.data.datamodules.one_graph`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

import lightning as L
import torch
from torch import Tensor
from torch.utils.data import DataLoader
from torch_geometric.data import Data
from torch_geometric.transforms import BaseTransform

from graphbench.data.datamodules.schema import FEATURE_NORMS, DatasetConfig, LayoutConfig, key_names
from graphbench.data.info import DatasetInfo, Level
from graphbench.data.io.raw_manifest import RawManifest, load_or_build_from_raw
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.samplers.base import Sampler
from graphbench.data.sources.base import Source
from graphbench.data.store.cache import cache_key, load_or_build
from graphbench.data.store.device_store import DeviceStore
from graphbench.data.store.graph_store import GraphStore
from graphbench.data.store.loader import GraphIds
from graphbench.data.store.sharding import Shard
from graphbench.transforms.channelwise import ChannelwiseNorm
from graphbench.vocabulary.errors import ArgumentError, ConfigError, DataError
from graphbench.vocabulary.splits import SPLITS


class Layout(Protocol):
    """How a DataModule's data is split and batched: many graphs split by graph
    (:class:`~graphbench.data.datamodules.many_graphs.ManyGraphs`), or one graph whose nodes or edges
    are split (:mod:`~graphbench.data.datamodules.one_graph`). The DataModule calls it with itself."""

    #: graphs per mini-batch (``dataset.batch_size``); ``None`` for one graph, which a sampler batches
    graphs_per_batch: int | None
    #: whether every batch is padded to one of a few fixed shapes (many graphs under ``pad_to=buckets``)
    pads_batches: bool
    #: how training batches are drawn: the configured sampler for one graph, full batches for many graphs
    sampler: Sampler
    #: the set-up graph of a one-graph dataset (for links, the message-passing graph); ``None`` otherwise
    graph: Data | None

    def setup(self, dm: DataModule) -> None:
        """After the DataModule has loaded its store and splits (and normalized the features)."""

    def split_dataset(self, dm: DataModule, split: str) -> GraphStore:
        """The graphs of ``split``, as the loaders see them."""
        ...

    def loader(self, dm: DataModule, split: str, shuffle: bool) -> DataLoader:
        """The loader of ``split``."""
        ...

    def check_devices(self, dm: DataModule, world_size: int) -> None:
        """Raises a :class:`ConfigError` when the data cannot be split over ``world_size`` processes."""


#: a layout schema (:data:`~graphbench.data.datamodules.schema.LayoutConfig`'s classes)
Schema = TypeVar("Schema", bound=LayoutConfig)


class DataModule(L.LightningDataModule):
    r"""The DataModule of one task level (:attr:`level`), holding the data's :class:`Layout`.

    The data comes from ``source`` (a :class:`~graphbench.data.sources.base.Source`: raw files ->
    collated store + split indices); the DataModule owns everything around it, as ``dataset`` (a
    :class:`~graphbench.data.datamodules.schema.DatasetConfig`) configures it:

    - the processed-data cache in ``cache_dir`` (written atomically, under a lock), keyed by the
      source's class, version, :meth:`~Source.cache_params` and the MD5s of the raw files its build
      located; every run checks those raw files under ``data_dir`` before it uses the cache
      (:mod:`graphbench.data.io.raw_manifest`);
    - the raw files under ``data_dir`` (read-only), with missing files downloaded only when
      ``download`` is true (:class:`~graphbench.data.io.raw_root.RawRoot`);
    - a positional-encoding ``pe_transform``, applied once to every graph and cached beside the
      processed data, keyed by the transform's ``repr``;
    - ``feature_norm``: ``channelwise`` standardizes dense features with training-split statistics;
    - ``num_workers`` loader processes, and the transfer of batches to the training device.

    How the data is split and batched belongs to its layout, which the level's DataModule chooses
    once, from ``source.one_graph``, and configures with ``layout`` (one of :attr:`layouts`; ``None``:
    that schema's defaults): many graphs in mini-batches of ``batch_size`` graphs
    (:class:`~graphbench.data.datamodules.many_graphs.ManyGraphs`), or one graph batched by
    ``sampler`` (:mod:`~graphbench.data.datamodules.one_graph`; many graphs take the full sampler only).

    :attr:`info` joins the YAML's protocol (``task_type``, ``metric``, ``higher_is_better``) with the
    source's facts. Facts a source knows without data are available right away; facts it reads from
    the data (e.g. the number of classes of a TU dataset) only after :meth:`setup`.
    ``split`` and ``provenance`` describe the dataset for people (a one-graph node layout reads
    ``split``).
    """

    #: the task level of the sources this DataModule serves
    level: ClassVar[Level]
    #: the layout schemas of the data it serves; ``source.one_graph`` picks one (its ``one_graph``)
    layouts: ClassVar[tuple[type[LayoutConfig], ...]]
    #: how the data is split and batched, chosen once by :meth:`make_layout`
    _layout: Layout

    def __init__(
        self,
        *,
        source: Source,
        dataset: DatasetConfig,
        layout: LayoutConfig | None = None,
        sampler: Sampler | None = None,
        pe_transform: BaseTransform | None = None,
    ) -> None:
        super().__init__()
        name = dataset.name
        if not isinstance(source, Source):
            raise ConfigError(f"dataset.source must build a graphbench Source, got {type(source).__name__}")
        if source.level != self.level:
            raise ConfigError(
                f"dataset '{name}': its source {type(source).__name__} is {source.level}-level, but {type(self).__name__} serves "
                f"{self.level}-level sources; set dataset._target_ to the {source.level}-level DataModule"
            )
        if isinstance(dataset.num_workers, bool) or not isinstance(dataset.num_workers, int) or dataset.num_workers < 0:
            raise ConfigError(f"dataset.num_workers must be a non-negative integer, got {dataset.num_workers!r}")
        if dataset.feature_norm not in FEATURE_NORMS:
            raise ConfigError(f"dataset.feature_norm={dataset.feature_norm!r} is not one of {list(FEATURE_NORMS)}")
        #: the dataset's keys, as the DataModule was given them
        self.dataset_config = dataset
        self.source = source
        self.name = name
        self.raw = RawRoot(dataset.data_dir, dataset.download)
        self.cache_dir = Path(dataset.cache_dir)
        self.num_workers = dataset.num_workers
        self.pe_transform = pe_transform
        self.task_type = dataset.task_type
        self.metric = dataset.metric
        self.higher_is_better = dataset.higher_is_better
        self.split = dataset.split or "official"
        self.provenance = dataset.provenance
        self.feature_norm = dataset.feature_norm
        self._on_device: dict[torch.device, DeviceStore] = {}
        self.dataset: GraphStore | None = None
        self.splits: dict[str, Tensor] = {}
        #: the digest of the MD5s of the raw files the processed data was built from (set by _processed)
        self._raw_key: str | None = None
        #: the record of those raw files (set by _processed, read by raw_file_md5s)
        self._raw_record: Path | None = None
        try:
            self._layout = self.make_layout(layout, sampler)
        except ArgumentError as exc:  # the layout's arguments are the keys of this DataModule's dataset node
            raise exc.under("dataset") from None

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The keys of a dataset node this DataModule takes: every DataModule's, then its layouts'."""
        layout_keys = (key for schema in cls.layouts for key in key_names(schema))
        return (*key_names(DatasetConfig), *dict.fromkeys(layout_keys))

    def make_layout(self, layout: LayoutConfig | None, sampler: Sampler | None) -> Layout:
        """The layout of :attr:`source`'s data, configured by ``layout`` (the level's choice)."""
        raise NotImplementedError

    def layout_of(self, schema: type[Schema], layout: LayoutConfig | None) -> Schema:
        """``layout`` when it is a ``schema``; otherwise that schema's defaults, unless ``layout`` (the
        schema of data that :attr:`source` does not ship) sets a key: that key's refusal."""
        if isinstance(layout, schema):
            return layout
        if layout is not None:
            defaults = type(layout)()
            changed = [key for key in key_names(layout) if getattr(layout, key) != getattr(defaults, key)]
            if changed:
                raise ConfigError(type(layout).refusal(changed[0], getattr(layout, changed[0]), self.name))
        return schema()

    @property
    def layout(self) -> Layout:
        """How the data is split and batched (set by the level's constructor)."""
        return self._layout

    @property
    def sampler(self) -> Sampler:
        """The one-graph layout's sampler (``full`` for many graphs)."""
        return self._layout.sampler

    @property
    def graph(self) -> Data | None:
        """The set-up graph of a one-graph dataset (``None`` before :meth:`setup` and for many graphs)."""
        return self._layout.graph

    @property
    def batch_size(self) -> int | None:
        """Graphs per mini-batch (``dataset.batch_size``); ``None`` for one graph, which its sampler batches."""
        return self._layout.graphs_per_batch

    @property
    def pads_batches(self) -> bool:
        """Whether every batch is padded to one of a few fixed shapes (``pad_to=buckets``): a compiled
        network then takes static shapes (:func:`graphbench.speedups.compile_network`)."""
        return self._layout.pads_batches

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

    def cache_path(self, *extra: object, raw_key: str | None = None) -> Path:
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
            record, lambda raw_key: self.cache_path(raw_key=raw_key), self.raw, build, self._build_label()
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
        return load_or_build(self.cache_path("pe", repr(self.pe_transform)), build, label)

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
        try:
            self.layout.setup(self)
        except ArgumentError as exc:  # an argument the layout was given: a key of the dataset node
            raise exc.under("dataset") from None

    # -- loaders --------------------------------------------------------------------------------

    def split_dataset(self, split: str) -> GraphStore:
        """The graphs of ``split`` as its loader sees them (set up on first use)."""
        if self.dataset is None:
            self.setup()
        return self.layout.split_dataset(self, split)

    @property
    def shard(self) -> Shard | None:
        """This process's place in a data-parallel run (from the attached Trainer); ``None`` outside one."""
        trainer = self.trainer
        return Shard(trainer.global_rank, trainer.world_size) if trainer is not None else None

    def check_devices(self, world_size: int) -> None:
        """Raises a :class:`ConfigError` when this dataset cannot be split over ``world_size``
        data-parallel processes (the layout decides: graphs always can be)."""
        self.layout.check_devices(self, world_size)

    def loader(self, split: str, shuffle: bool = False) -> DataLoader:
        """The loader of ``split`` (set up on first use), as its layout batches it: ``train``, ``val``
        or ``test``, shuffled when ``shuffle`` (the training loader is)."""
        if split not in SPLITS:
            raise ConfigError(f"split {split!r} is not one of {list(SPLITS)}")
        if self.dataset is None:
            self.setup()
        return self.layout.loader(self, split, shuffle)

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
            return self._on_device[device].batch(batch.ids, batch.buckets)
        if device.type == "cpu":
            return batch
        return super().transfer_batch_to_device(batch, device, dataloader_idx)

    def train_dataloader(self) -> DataLoader:
        return self.loader("train", shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return self.loader("val", shuffle=False)

    def test_dataloader(self) -> DataLoader:
        return self.loader("test", shuffle=False)
