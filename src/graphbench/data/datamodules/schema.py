"""The schema of a dataset node (``conf/dataset/*.yaml``): the typed keys every DataModule takes
(:class:`DatasetConfig`) and the keys of each layout of the data (:class:`ManyGraphsConfig`,
:class:`OneGraphNodesConfig`, :class:`OneGraphLinksConfig`). Every key stays a flat key of ``dataset``
(``dataset.batch_size=32``, ``dataset.split=random``); :mod:`graphbench.build.data` sorts
them into these dataclasses, and a key that none of them, the ``source`` node nor
:data:`READ_ELSEWHERE` names is one clear error."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

#: keys of the dataset node that no DataModule takes: ``module`` configures the task module,
#: ``literature`` lists published values for the report's paper column (graphbench.report.literature),
#: ``fold_key`` names the keys besides ``split_index`` that index a fold (graphbench.report.collect.fold_names),
#: ``synthetic: true`` marks a generated graph, which task=memorization keeps whole and splits per class (graphbench.tasks.memorization)
READ_ELSEWHERE: tuple[str, ...] = ("module", "literature", "fold_key", "synthetic")

#: input-feature normalizations: ``channelwise`` standardizes every dense node/edge feature channel
#: with training-split mean and std (the LRGB reassessment, Tönshoff et al. 2023, on superpixels)
FEATURE_NORMS: tuple[str, ...] = ("none", "channelwise")

#: how many-graph mini-batches are padded: ``none`` as they come, ``buckets`` up to a few fixed sizes
PAD_TO: tuple[str, ...] = ("none", "buckets")


def key_names(schema: Any) -> tuple[str, ...]:
    """The keys of a schema dataclass, in the order it declares them."""
    return tuple(f.name for f in fields(schema))


@dataclass(frozen=True)
class DatasetConfig:
    """The keys every DataModule takes, whatever its level and its data's layout."""

    name: str  # the dataset's name: its cache files, its log lines, its rows in the report
    data_dir: Path  # the raw files, read-only (${paths.data_dir})
    cache_dir: Path  # the processed-data cache (${paths.cache_dir})
    task_type: str  # binary, multiclass, multilabel or regression: the task module's loss and metrics
    metric: str  # the metric a run selects its best epoch by (val/<metric>)
    higher_is_better: bool  # the direction of metric
    num_workers: int = 0  # loader processes; 0 loads in the training process
    split: str | None = None  # one-graph node data: the split (null: the source's fixed one); else a description
    provenance: str = ""  # where the data comes from, for people; not read
    download: bool = False  # true: fetch missing raw files from their official URLs into data_dir
    feature_norm: str = "none"  # one of FEATURE_NORMS: none, or channelwise (training-split statistics)


@dataclass(frozen=True)
class ManyGraphsConfig:
    """The keys of many graphs, split by graph and mini-batched by graph
    (:class:`~graphbench.data.datamodules.many_graphs.ManyGraphs`); refused for one graph."""

    #: whether this layout is that of one graph
    one_graph: ClassVar[bool] = False

    batch_size: int | None = None  # graphs per mini-batch, at every level; required
    batch_on_device: bool = False  # graph level: keep the dataset on the training device, gather batches there
    pad_to: str = "none"  # one of PAD_TO: none, or buckets (graph level: pad each batch up to a few fixed sizes)

    @staticmethod
    def given(values: dict[str, Any]) -> list[str]:
        """The keys of ``values`` set to something a one-graph dataset refuses."""
        refused = {
            "batch_size": values.get("batch_size") is not None,
            "batch_on_device": bool(values.get("batch_on_device")),
            "pad_to": values.get("pad_to") not in (None, "none"),
        }
        return [key for key, is_set in refused.items() if is_set]

    @staticmethod
    def refusal(key: str, value: Any, name: str) -> str:
        """Why ``key`` (set to ``value``) is refused for the one graph of dataset ``name``."""
        if key == "batch_size":
            return (
                f"dataset.batch_size (graphs per batch) does not apply to {name}, which is one graph: remove it; its mini-batch "
                "sizes live in sampler. (e.g. sampler=neighbor sampler.batch_size=1024)"
            )
        if key == "batch_on_device":
            return f"dataset.batch_on_device=true applies to graph-level datasets; {name} is one graph: set it false"
        return f"dataset.{key}={value} applies to datasets of many graphs; {name} is one graph: set it none"


@dataclass(frozen=True)
class OneGraphNodesConfig:
    """The keys of one graph whose nodes are split (transductive node tasks,
    :class:`~graphbench.data.datamodules.one_graph.OneGraphNodes`); refused for many graphs."""

    #: whether this layout is that of one graph
    one_graph: ClassVar[bool] = True

    split_index: int = 0  # which of the source's fixed splits (split: its fixed one)
    split_seed: int = 0  # the seed of a drawn split (split: random or igb)
    split_fractions: tuple[float, float, float] = (0.6, 0.2, 0.2)  # train / val / test of split: random
    normalize_features: bool = False  # row-normalize x (Kipf & Welling 2017)

    @staticmethod
    def given(values: dict[str, Any]) -> list[str]:
        """The keys of ``values`` set to something a many-graph dataset refuses (any value but null)."""
        return [key for key in key_names(OneGraphNodesConfig) if values.get(key) is not None]

    @staticmethod
    def refusal(key: str, value: Any, name: str) -> str:
        """Why ``key`` (set to ``value``) is refused for the many graphs of dataset ``name``."""
        return f"dataset.{key} applies to one-graph (transductive) datasets; {name} is split by graphs"


@dataclass(frozen=True)
class OneGraphLinksConfig:
    """The keys of one graph whose edges are split (OGB's link property prediction,
    :class:`~graphbench.data.datamodules.one_graph.OneGraphLinks`); refused for many graphs."""

    #: whether this layout is that of one graph
    one_graph: ClassVar[bool] = True

    eval_batch_size: int | None = None  # labelled pairs per evaluation batch; null: all at once
    use_val_edges_as_input: bool = False  # test time: the validation edges join the message-passing graph

    @staticmethod
    def given(values: dict[str, Any]) -> list[str]:
        """The keys of ``values`` set to something a many-graph dataset refuses."""
        refused = {
            "eval_batch_size": values.get("eval_batch_size") is not None,
            "use_val_edges_as_input": bool(values.get("use_val_edges_as_input")),
        }
        return [key for key, is_set in refused.items() if is_set]

    @staticmethod
    def refusal(key: str, value: Any, name: str) -> str:
        """Why ``key`` (set to ``value``) is refused for the many graphs of dataset ``name``."""
        return f"dataset.{key} applies to one-graph link datasets; {name} has its pairs in many graphs"


#: the keys of one layout of the data
LayoutConfig = ManyGraphsConfig | OneGraphNodesConfig | OneGraphLinksConfig
