"""graphbench.build.data: a dataset node becomes its DataModule by the schema. The
DataModule gets the keys of :class:`DatasetConfig` and of the layout of the source's data, typed; the
``source`` node is built as it is (its knobs are its arguments' names); keys read elsewhere are
dropped; a key no schema names is one clear line naming the valid ones; a key of the other layout is
that layout's refusal. The ``sampler`` group's node becomes its Sampler (its metadata dropped; no
node is no sampler; a target that is no Sampler is one clear error; which data takes which sampler is
the DataModules', tests/data/datamodules). The cached transform is the graph transform, then the PE
transform, composed; ``None`` when neither is set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from omegaconf import DictConfig, OmegaConf
from torch_geometric.transforms import AddSelfLoops, Compose, ToUndirected

from graphbench.build.data import (
    build_sampler,
    datamodule_from_config,
    datamodule_from_keys,
    dataset_transform,
    layout_config,
    source_knobs,
    typed,
    unknown_keys,
)
from graphbench.data.datamodules import GraphLevelDataModule, LinkLevelDataModule, NodeLevelDataModule
from graphbench.data.datamodules.one_graph import OneGraphNodes
from graphbench.data.datamodules.schema import DatasetConfig, ManyGraphsConfig, OneGraphLinksConfig, OneGraphNodesConfig
from graphbench.data.samplers import FullBatch, NeighborSampling
from graphbench.vocabulary.errors import ConfigError
from tests.data.datamodules.test_node_level import COMMON, Paths, Triangle


def dataset_node(**extra: object) -> DictConfig:
    """Cora's node (Planetoid reads no data until setup), with ``extra`` keys."""
    root = OmegaConf.create(
        {
            "paths": {"data_dir": "/data"},
            "dataset": {
                "_target_": "graphbench.data.datamodules.NodeLevelDataModule",
                "name": "cora",
                "data_dir": "${paths.data_dir}",
                "cache_dir": "/cache",
                "task_type": "multiclass",
                "metric": "accuracy",
                "higher_is_better": True,
                "split_index": 0,
                "module": {"_target_": "x.Y"},
                "source": {"_target_": "graphbench.data.sources.node.planetoid.Planetoid", "name": "${dataset.name}"},
                **extra,
            },
        }
    )
    return root.dataset


def test_the_node_becomes_its_datamodule_with_typed_keys() -> None:
    dm = datamodule_from_config(dataset_node(num_workers=2, split_seed=None, literature={"value": 81.5}))
    assert isinstance(dm, NodeLevelDataModule) and isinstance(dm.layout, OneGraphNodes)
    assert (dm.name, dm.data_dir, dm.num_workers, dm.split) == ("cora", Path("/data"), 2, "public")
    assert dm.dataset_config == DatasetConfig(
        name="cora",
        data_dir=Path("/data"),
        cache_dir=Path("/cache"),
        task_type="multiclass",
        metric="accuracy",
        higher_is_better=True,
        num_workers=2,
    )
    assert dm.source.name == "cora" and dm.layout.split_seed == 0  # null: the schema's default


def test_source_knobs_are_the_arguments_of_the_source_node() -> None:
    node = dataset_node(homophily=0.5)
    node.source.homophily = "${dataset.homophily}"
    assert source_knobs(node) == ("name", "homophily")
    assert unknown_keys(node, NodeLevelDataModule) == []
    del node.source["homophily"]
    assert unknown_keys(node, NodeLevelDataModule) == ["homophily"]


def test_each_datamodule_takes_the_dataset_keys_then_its_layouts() -> None:
    common = ("name", "data_dir", "cache_dir", "task_type", "metric", "higher_is_better", "num_workers", "split")
    common += ("provenance", "download", "feature_norm")
    many = ("batch_size", "batch_on_device", "pad_to")
    assert GraphLevelDataModule.keys() == (*common, *many)
    assert NodeLevelDataModule.keys() == (*common, *many, "split_index", "split_seed", "split_fractions", "normalize_features")
    assert LinkLevelDataModule.keys() == (*common, *many, "eval_batch_size", "use_val_edges_as_input")


def test_an_unknown_key_is_one_line_naming_the_valid_ones() -> None:
    with pytest.raises(ConfigError) as raised:
        datamodule_from_config(dataset_node(batchsize=3))
    message = str(raised.value)
    assert message.startswith(
        "dataset.batchsize is not a key of dataset 'cora' (did you mean batch_size?): NodeLevelDataModule takes name, data_dir,"
    )
    assert (
        message.endswith("; its source takes name; read elsewhere: module, literature, fold_key, synthetic")
        and "\n" not in message
    )
    # split_index is a node-level key: a graph-level DataModule takes it only through its source
    graph = dataset_node(_target_="graphbench.data.datamodules.GraphLevelDataModule")
    assert unknown_keys(graph, GraphLevelDataModule) == ["split_index"]


def test_a_value_of_the_wrong_type_or_a_missing_key_is_one_line() -> None:
    with pytest.raises(ConfigError, match=r"^dataset.num_workers='two' is not valid: Value 'two' of type 'str' could not be"):
        datamodule_from_config(dataset_node(num_workers="two"))
    with pytest.raises(ConfigError, match=r"^dataset.split_index=1.5 is not valid: Value '1.5' of type 'float'"):
        datamodule_from_config(dataset_node(split_index=1.5))
    node = dataset_node()
    del node["metric"]
    with pytest.raises(ConfigError, match=r"^dataset 'cora' has no metric: every DataModule takes name, data_dir, "):
        datamodule_from_config(node)
    assert typed(ManyGraphsConfig, {"batch_size": 4}, "x") == ManyGraphsConfig(batch_size=4)


def test_keys_of_the_other_layout_are_its_refusal() -> None:
    with pytest.raises(ConfigError, match=r"^dataset.batch_size \(graphs per batch\) does not apply to cora, which is one graph"):
        datamodule_from_config(dataset_node(batch_size=8))
    with pytest.raises(ConfigError, match=r"^dataset.batch_on_device=true applies to graph-level datasets; x is one graph"):
        layout_config(NodeLevelDataModule, True, {"batch_on_device": True}, "x")
    with pytest.raises(ConfigError, match=r"^dataset.pad_to=buckets applies to datasets of many graphs; x is one graph"):
        layout_config(LinkLevelDataModule, True, {"pad_to": "buckets"}, "x")
    # the defaults of the other layout (a shared pad_to: none, batch_on_device: false) are no refusal
    values = {"pad_to": "none", "batch_on_device": False, "split_index": 2}
    assert layout_config(NodeLevelDataModule, True, values, "x") == OneGraphNodesConfig(split_index=2)
    with pytest.raises(ConfigError, match=r"^dataset.split_index applies to one-graph \(transductive\) datasets; x is split"):
        layout_config(NodeLevelDataModule, False, values, "x")
    with pytest.raises(ConfigError, match=r"^dataset.eval_batch_size applies to one-graph link datasets; x has its pairs"):
        layout_config(LinkLevelDataModule, False, {"eval_batch_size": 8}, "x")
    assert layout_config(LinkLevelDataModule, True, {}, "x") == OneGraphLinksConfig()
    assert layout_config(GraphLevelDataModule, True, {}, "x") is None  # the DataModule refuses one graph


def test_keys_given_in_python_are_sorted_into_the_schema(tmp_path: Path) -> None:
    keys = dict(name="toy", data_dir=tmp_path, cache_dir=tmp_path, batch_size=2, **COMMON)
    dm = datamodule_from_keys(NodeLevelDataModule, Paths(), keys, sampler=FullBatch())
    assert dm.batch_size == 2 and dm.data_dir == tmp_path
    with pytest.raises(ConfigError, match=r"^dataset.batchsize is not a key of NodeLevelDataModule, which takes name, "):
        datamodule_from_keys(NodeLevelDataModule, Paths(), {**keys, "batchsize": 2})
    one = {key: value for key, value in keys.items() if key != "batch_size"}
    assert datamodule_from_keys(NodeLevelDataModule, Triangle(), {**one, "normalize_features": True}).layout.normalize_features


def test_a_node_without_source_or_with_a_bad_target_is_a_config_error() -> None:
    node = dataset_node()
    del node["source"]
    with pytest.raises(ConfigError, match="has no source node"):
        datamodule_from_config(node)
    with pytest.raises(ConfigError, match="not an importable DataModule class"):
        datamodule_from_config(dataset_node(_target_="graphbench.data.datamodules.NoSuchDataModule"))
    with pytest.raises(ConfigError, match="is not a graphbench DataModule; use one of"):
        datamodule_from_config(dataset_node(_target_="graphbench.data.samplers.FullBatch"))
    node = dataset_node()
    node.source = {"_target_": "graphbench.data.samplers.FullBatch"}
    with pytest.raises(ConfigError, match=r"^dataset.source must build a graphbench Source, got FullBatch$"):
        datamodule_from_config(node)


def test_feature_norm_is_a_flat_knob_of_every_dataset(compose_cfg) -> None:
    """`dataset.feature_norm=channelwise`, as the README writes it, reaches the DataModule."""
    from graphbench.build.data import build_datamodule

    for name in ("cycles", "cora", "pascalvoc-sp", "tsp"):
        cfg = compose_cfg([f"dataset={name}", "dataset.feature_norm=channelwise"])
        assert build_datamodule(cfg).feature_norm == "channelwise", name


NEIGHBOR = {"_target_": "graphbench.data.samplers.NeighborSampling", "name": "neighbor", "num_neighbors": [2], "batch_size": 8}
FULL = {"_target_": "graphbench.data.samplers.FullBatch", "name": "full"}


def test_the_node_builds_its_sampler_without_its_metadata() -> None:
    sampler = build_sampler(OmegaConf.create(NEIGHBOR))
    assert isinstance(sampler, NeighborSampling)
    assert (sampler.num_neighbors, sampler.batch_size) == ([2], 8)
    full = build_sampler(OmegaConf.create({**FULL, "batch_size": 4}))
    assert isinstance(full, FullBatch) and full.batch_size == 4


@pytest.mark.parametrize("node", [None, {"name": "full"}])
def test_no_node_or_no_target_is_no_sampler(node: dict[str, Any] | None) -> None:
    assert build_sampler(None if node is None else OmegaConf.create(node)) is None


def test_a_target_that_is_no_sampler_is_one_clear_error() -> None:
    node = {"_target_": "graphbench.data.store.sharding.Shard", "name": "odd", "rank": 0, "world_size": 1}
    with pytest.raises(ConfigError, match=r"^sampler._target_ must build a graphbench Sampler, got Shard$"):
        build_sampler(OmegaConf.create(node))


GRAPH = {"_target_": "torch_geometric.transforms.ToUndirected", "name": "undirected"}
PE = {"_target_": "torch_geometric.transforms.AddSelfLoops", "name": "loops"}


def test_neither_transform_gives_none() -> None:
    assert dataset_transform(OmegaConf.create({"pe": {"name": "none"}})) is None
    assert dataset_transform(OmegaConf.create({"transform": None, "pe": {"transform": None}})) is None


def test_one_transform_is_returned_alone_without_its_metadata_keys() -> None:
    assert isinstance(dataset_transform(OmegaConf.create({"transform": GRAPH, "pe": {}})), ToUndirected)
    assert isinstance(dataset_transform(OmegaConf.create({"pe": {"transform": PE}})), AddSelfLoops)


def test_the_graph_transform_comes_before_the_pe_transform() -> None:
    composed = dataset_transform(OmegaConf.create({"transform": GRAPH, "pe": {"transform": PE}}))
    assert isinstance(composed, Compose)
    assert [type(t) for t in composed.transforms] == [ToUndirected, AddSelfLoops]
