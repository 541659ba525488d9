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
    """The flat keys of ``dataset`` whose values its ``source`` node reads, asked of OmegaConf: every
    flat key gets a unique marker in a copy of the whole config, and the knobs are the keys whose
    marker the resolved source holds."""
    source = dataset.get("source")
    if not isinstance(source, DictConfig):
        return set()
    root = OmegaConf.to_container(dataset._get_root(), resolve=False)
    assert isinstance(root, dict)
    path = dataset._get_full_key(None)
    probe = OmegaConf.create(root)
    node = OmegaConf.select(probe, path) if path else probe
    assert isinstance(node, DictConfig)
    markers = {key: f"<graphbench-probe:{key}>" for key in node if key not in ("_target_", "source")}
    for key, marker in markers.items():
        node[key] = marker
    resolved = str(OmegaConf.to_container(node.source, resolve=True))
    return {key for key, marker in markers.items() if marker in resolved}


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
