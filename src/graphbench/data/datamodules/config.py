"""How a dataset node of the config becomes a DataModule (the scheme of ``conf/dataset/*.yaml``), by
an explicit mapping of keys to the objects that own them:

- ``_target_`` names the level's DataModule class; its :attr:`~DataModule.config_keys` list the keys it
  takes: every DataModule's (:data:`~graphbench.data.datamodules.base.COMMON_KEYS`), then its layouts'
  (:data:`~graphbench.data.datamodules.many_graphs.MANY_GRAPHS_KEYS`: ``batch_size`` graphs per batch,
  ``batch_on_device``; :data:`~graphbench.data.datamodules.one_graph.ONE_GRAPH_NODE_KEYS`,
  :data:`~graphbench.data.datamodules.one_graph.ONE_GRAPH_LINK_KEYS`). The DataModule hands each
  layout its keys, and names a key that its data's layout does not take in one line.
- ``source:`` is built as it is (``hydra.utils.instantiate``). Its knobs stay flat keys of
  ``dataset`` that the user sets (``dataset.split_index=3``), and the source reads them by
  interpolation (``split_index: ${dataset.split_index}``); a knob the DataModule lists too (``name``,
  syn-cora's ``split_seed``) reaches both.
- :data:`READ_ELSEWHERE`: keys that other parts of the platform read.

A flat key that none of them reads (:func:`unread_keys`) is one clear :class:`ConfigError`.
- the ``sampler`` config group reaches only the DataModules that take one
  (:mod:`graphbench.data.samplers.config`); the mini-batch sizes of one-graph datasets are its keys.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf

from graphbench.data.datamodules.base import DataModule
from graphbench.run.errors import ConfigError

#: keys of the dataset node that are not DataModule arguments: ``module`` configures the task module,
#: ``literature`` lists published values for the report's paper column (graphbench.report.literature),
#: ``fold_key`` names the keys besides ``split_index`` that index a fold (graphbench.report.collect.fold_names)
READ_ELSEWHERE: tuple[str, ...] = ("module", "literature", "fold_key")


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


def source_knobs(dataset: DictConfig) -> set[str]:
    """The flat keys of ``dataset`` that its ``source`` node interpolates, read from the source's
    unresolved strings: ``${dataset.key}``, a relative ``${...key}`` that climbs to the dataset node, or
    either as a resolver's argument (``${oc.select:dataset.key,0}``). A key read through another key
    (``label: ${dataset.tag}``, the source reading ``${dataset.label}``) counts as ``label`` only."""
    source = dataset.get("source")
    if not isinstance(source, DictConfig):
        return set()
    flat = {key for key in dataset if key not in ("_target_", "source")}
    raw = OmegaConf.to_container(source, resolve=False)
    return {key for key in _interpolated(raw, ("source",)) if key in flat}


def _interpolated(value: Any, path: tuple[str, ...]) -> Iterator[str]:
    """The dataset-level keys that the strings in ``value`` (found at ``path`` below the dataset node;
    the key of a string included) interpolate."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _interpolated(item, (*path, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _interpolated(item, (*path, str(index)))
    elif isinstance(value, str):
        for body in INTERPOLATION.findall(value):
            for reference in body.split(":", 1)[-1].split(","):
                key = _dataset_key(reference.strip(), path[:-1])
                if key is not None:
                    yield key


#: the body of an interpolation without nested ones: ``dataset.name`` in ``${dataset.name}``
INTERPOLATION = re.compile(r"\$\{([^${}]+)\}")


def _dataset_key(reference: str, node: tuple[str, ...]) -> str | None:
    """The dataset-level key that ``reference`` names from inside ``node`` (a path below the dataset
    node), or ``None``: ``dataset.k`` absolutely, or ``.k``, ``..k``, ... climbing one node per dot
    after the first."""
    if reference.startswith("dataset."):
        return reference.split(".")[1]
    dots = len(reference) - len(reference.lstrip("."))
    if dots == 0 or dots - 1 != len(node):
        return None
    return reference[dots:].split(".")[0] or None


def unread_keys(dataset: DictConfig, cls: type[DataModule]) -> list[str]:
    """The flat keys of ``dataset`` that nothing reads: not ``cls``'s, not the source's, not
    :data:`READ_ELSEWHERE`."""
    known = {"_target_", "source", *cls.config_keys, *READ_ELSEWHERE}
    left = [key for key in dataset if key not in known]
    if not left:
        return []
    knobs = source_knobs(dataset)
    return [key for key in left if key not in knobs]


def datamodule_arguments(dataset: DictConfig) -> dict[str, Any]:
    """``_target_``, ``source`` (a node with ``_target_`` that ``instantiate`` builds first) and the
    resolved values of the keys the DataModule class lists (:attr:`DataModule.config_keys`)."""
    if "source" not in dataset:
        raise ConfigError(f"dataset '{dataset.get('name')}' has no source node; add `source:` with the dataset source's _target_")
    cls = datamodule_class(dataset)
    unread = unread_keys(dataset, cls)
    if unread:
        raise ConfigError(
            f"dataset.{unread[0]} is read by nothing: it is not a key of {cls.__name__} ({', '.join(cls.config_keys)}), "
            f"nor read by dataset.source, nor one of {list(READ_ELSEWHERE)}; remove it or fix its name"
        )
    resolved = OmegaConf.to_container(dataset, resolve=True)
    assert isinstance(resolved, dict)
    taken = {key: resolved[key] for key in cls.config_keys if key in resolved}
    return {"_target_": resolved["_target_"], "source": resolved["source"], **taken}
