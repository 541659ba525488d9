"""The DataModule of a composed config: :func:`build_datamodule` builds the ``sampler`` group's
sampler (:func:`build_sampler`), the transform the DataModule caches (:func:`dataset_transform`: the
``transform`` node, then the ``pe`` group's), and the DataModule of the dataset node
(``conf/dataset/*.yaml``) by its schema (:mod:`graphbench.data.datamodules.schema`):

- ``_target_`` names the level's DataModule class; its :meth:`~DataModule.keys` are the keys every
  DataModule takes (:class:`~graphbench.data.datamodules.schema.DatasetConfig`), then those of its
  layouts (:attr:`~DataModule.layouts`);
- ``source:`` is built as it is (``hydra.utils.instantiate``). Each of its arguments reads the flat key
  of its name (``split_index: ${dataset.split_index}``), so the source's knobs are the keys of its
  node, set by the user as ``dataset.split_index=3``; a knob the DataModule takes too (``name``,
  syn-cora's ``split_seed``) reaches both;
- :data:`~graphbench.data.datamodules.schema.READ_ELSEWHERE`: keys that other parts of the platform read.

Any other key is one clear :class:`ConfigError` (:func:`unknown_keys`). The DataModule's keys are
typed by their schema (a value of the wrong type is one line, too); the source's ``one_graph`` picks
the layout whose keys the DataModule gets, and a key of the level's other layout set for this data is
that layout's refusal (``dataset.batch_size`` for one graph).
"""

from __future__ import annotations

import difflib
from dataclasses import replace
from typing import Any, TypeVar

from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException
from torch_geometric.transforms import BaseTransform, Compose

from graphbench.config.instantiate import METADATA_KEYS, build
from graphbench.data.datamodules.base import DataModule
from graphbench.data.datamodules.schema import READ_ELSEWHERE, DatasetConfig, LayoutConfig, key_names
from graphbench.data.samplers.base import Sampler
from graphbench.data.sources.base import Source
from graphbench.vocabulary.errors import ConfigError

#: a schema dataclass
Schema = TypeVar("Schema")
#: a DataModule class
Module = TypeVar("Module", bound=DataModule)


def datamodule_class(dataset: DictConfig) -> type[DataModule]:
    """The DataModule class that ``dataset._target_`` names (one clear line when it names none)."""
    target = dataset.get("_target_")
    try:
        cls = get_class(str(target))
    except Exception as exc:
        raise ConfigError(f"dataset._target_={target!r} is not an importable DataModule class ({exc})") from None
    if not (isinstance(cls, type) and issubclass(cls, DataModule)):
        raise ConfigError(
            f"dataset._target_={target!r} is not a graphbench DataModule; use one of graphbench.data.datamodules."
            "{GraphLevelDataModule, NodeLevelDataModule, LinkLevelDataModule}"
        )
    return cls


def source_knobs(dataset: DictConfig) -> tuple[str, ...]:
    """The flat keys of ``dataset`` that its ``source`` reads: the arguments its node names."""
    source = dataset.get("source")
    return tuple(str(key) for key in source if key != "_target_") if isinstance(source, DictConfig) else ()


def unknown_keys(dataset: DictConfig, cls: type[DataModule]) -> list[str]:
    """The flat keys of ``dataset`` that no schema names: not ``cls``'s keys, not its source's knobs,
    not :data:`READ_ELSEWHERE`."""
    known = {"_target_", "source", *cls.keys(), *source_knobs(dataset), *READ_ELSEWHERE}
    return [str(key) for key in dataset if key not in known]


def unknown_key_message(key: str, dataset: DictConfig, cls: type[DataModule]) -> str:
    """One line naming the unknown ``key`` of ``dataset``, the closest valid one and every valid key."""
    knobs = source_knobs(dataset)
    close = difflib.get_close_matches(key, [*cls.keys(), *knobs, *READ_ELSEWHERE], n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return (
        f"dataset.{key} is not a key of dataset '{dataset.get('name')}'{hint}: {cls.__name__} takes {', '.join(cls.keys())}; "
        f"its source takes {', '.join(knobs) or 'no knobs'}; read elsewhere: {', '.join(READ_ELSEWHERE)}"
    )


def typed(schema: type[Schema], values: dict[str, Any], name: str) -> Schema:
    """``schema`` holding ``values`` (a ``null`` value: the schema's default), typed by OmegaConf's
    structured config: a missing key or a value of the wrong type is one :class:`ConfigError`."""
    given = {key: value for key, value in values.items() if value is not None}
    try:
        config = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(schema), given))
    except OmegaConfBaseException as exc:
        key = exc.full_key
        if key not in given:
            raise ConfigError(f"dataset '{name}' has no {key}: every DataModule takes {', '.join(key_names(schema))}") from None
        raise ConfigError(f"dataset.{key}={given[key]!r} is not valid: {str(exc).splitlines()[0]}") from None
    # OmegaConf hands a tuple-typed key (split_fractions) back as a list
    lists = {key: tuple(value) for key, value in vars(config).items() if isinstance(value, list)}
    return replace(config, **lists)  # type: ignore[type-var, return-value]


def layout_config(cls: type[DataModule], one_graph: bool, values: dict[str, Any], name: str) -> LayoutConfig | None:
    """The layout config of ``cls``'s data (one graph or many, ``one_graph``) from ``values`` (the
    resolved dataset node); ``None`` when ``cls`` takes no such data (it refuses it). A key of another
    of ``cls``'s layouts that ``values`` sets is that layout's refusal."""
    chosen = None
    for schema in cls.layouts:
        if schema.one_graph == one_graph:
            chosen = schema
            continue
        given = schema.given(values)
        if given:
            raise ConfigError(schema.refusal(given[0], values[given[0]], name))
    if chosen is None:
        return None
    return typed(chosen, {key: values[key] for key in key_names(chosen) if key in values}, name)


def datamodule_from_keys(
    cls: type[Module],
    source: Source,
    values: dict[str, Any],
    *,
    sampler: Sampler | None = None,
    pe_transform: BaseTransform | None = None,
) -> Module:
    """``cls`` on ``source``, given the flat keys ``values`` (``cls``'s :meth:`~DataModule.keys` only)
    sorted into its schema: :class:`DatasetConfig` and the layout of the source's data."""
    name = str(values.get("name"))
    unknown = [key for key in values if key not in cls.keys()]
    if unknown:
        raise ConfigError(f"dataset.{unknown[0]} is not a key of {cls.__name__}, which takes {', '.join(cls.keys())}")
    if not isinstance(source, Source):
        raise ConfigError(f"dataset.source must build a graphbench Source, got {type(source).__name__}")
    config = typed(DatasetConfig, {key: values[key] for key in key_names(DatasetConfig) if key in values}, name)
    layout = layout_config(cls, source.one_graph, values, name)
    return cls(source=source, dataset=config, layout=layout, sampler=sampler, pe_transform=pe_transform)


def datamodule_from_config(
    dataset: DictConfig, *, sampler: Sampler | None = None, pe_transform: BaseTransform | None = None
) -> DataModule:
    """The DataModule of the dataset node ``dataset``: its ``_target_``'s class on the built ``source``,
    given the node's keys (:func:`datamodule_from_keys`), ``sampler`` and ``pe_transform``. A key that
    no schema names is one clear error (:func:`unknown_keys`)."""
    name = str(dataset.get("name"))
    if "source" not in dataset:
        raise ConfigError(f"dataset '{name}' has no source node; add `source:` with the dataset source's _target_")
    cls = datamodule_class(dataset)
    unknown = unknown_keys(dataset, cls)
    if unknown:
        raise ConfigError(unknown_key_message(unknown[0], dataset, cls))
    values = OmegaConf.to_container(dataset, resolve=True)
    assert isinstance(values, dict)
    source = build(values["source"], f"dataset '{name}': its source", path="dataset")
    keys = {key: values[key] for key in cls.keys() if key in values}
    return datamodule_from_keys(cls, source, keys, sampler=sampler, pe_transform=pe_transform)


def build_datamodule(cfg: DictConfig, first: BaseTransform | None = None) -> DataModule:
    """The DataModule of ``cfg.dataset``: its level's DataModule with the keys of its schema, its
    ``source`` node built as it is (:func:`datamodule_from_config`), the ``sampler`` group
    (:func:`build_sampler`: one-graph mini-batch sizes), and the graph transform and PE
    (:func:`dataset_transform`), after ``first`` where a task gives one (the memorization task's
    largest connected component)."""
    pe_transform = dataset_transform(cfg, first)  # first, the graph transform (+transform=...), then the PE
    return datamodule_from_config(cfg.dataset, sampler=build_sampler(cfg.get("sampler")), pe_transform=pe_transform)


def build_sampler(node: DictConfig | None) -> Sampler | None:
    """The sampler that ``node`` (``cfg.sampler``) configures; ``None`` without a node or a
    ``_target_``. A target that builds no :class:`Sampler` is one clear :class:`ConfigError`. Every
    DataModule gets it, and its layout takes it: one graph is batched by it, many graphs take
    ``sampler=full`` only (without a ``batch_size``)."""
    if node is None or node.get("_target_") is None:
        return None
    sampler = build(node, "sampler", METADATA_KEYS)
    if not isinstance(sampler, Sampler):
        raise ConfigError(f"sampler._target_ must build a graphbench Sampler, got {type(sampler).__name__}")
    return sampler


def dataset_transform(cfg: DictConfig, first: BaseTransform | None = None) -> BaseTransform | None:
    """The transform a DataModule applies once to its data and caches (keyed by its ``repr``): ``first``
    (a task's own, e.g. :class:`~torch_geometric.transforms.LargestConnectedComponents`), the graph
    transform of ``cfg.transform`` (e.g. ``+transform=rewire_feature_similarity``), then the positional
    encoding of ``cfg.pe.transform``, so that the encoding describes the transformed graph; any may be
    absent, ``None`` when none is set."""
    transforms = [first] if first is not None else []
    if cfg.get("transform"):
        transforms.append(build(cfg.transform, "transform", METADATA_KEYS))
    if cfg.pe.get("transform"):
        transforms.append(build(cfg.pe.transform, "pe.transform", METADATA_KEYS))
    if not transforms:
        return None
    return transforms[0] if len(transforms) == 1 else Compose(transforms)
