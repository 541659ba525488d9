"""The dataset node scheme, an explicit mapping: the DataModule takes the keys its class lists, the
``source`` node is built as it is (its knobs are the flat keys it interpolates), keys read elsewhere
are dropped, and a key that nothing reads is one clear error."""

from __future__ import annotations

import pytest
from omegaconf import DictConfig, OmegaConf

from graphbench.data.datamodules import GraphLevelDataModule, LinkLevelDataModule, NodeLevelDataModule
from graphbench.data.datamodules.base import COMMON_KEYS
from graphbench.data.datamodules.config import datamodule_arguments, source_knobs, unread_keys
from graphbench.run.errors import ConfigError


def dataset_node(**extra: object) -> DictConfig:
    root = OmegaConf.create(
        {
            "paths": {"data_dir": "/data"},
            "dataset": {
                "_target_": "graphbench.data.datamodules.NodeLevelDataModule",
                "name": "cora",
                "data_dir": "${paths.data_dir}",
                "split_index": 3,
                "homophily": 0.5,
                "sizes": 4,
                "module": {"_target_": "x.Y"},
                "source": {
                    "_target_": "graphbench.data.sources.node.planetoid.Planetoid",
                    "name": "${dataset.name}",
                    "h": "${dataset.homophily}",
                    "n": ["${dataset.sizes}", 2],
                },
                **extra,
            },
        }
    )
    return root.dataset


def test_source_knobs_are_the_flat_keys_the_source_resolves_to() -> None:
    node = dataset_node(tag="x", label="run-${dataset.tag}")
    node.source.label = "${dataset.label}"  # read through another key, inside a string
    assert source_knobs(node) == {"name", "homophily", "sizes", "label"}
    assert node.homophily == 0.5 and node.source.h == 0.5  # reading leaves the config as it was


def test_source_knobs_include_relative_and_resolver_references_that_reach_the_dataset_node() -> None:
    node = dataset_node(tag="x", depth=2)
    node.source.h = "${..tag}"  # from the source node, one level up: dataset.tag
    node.source.n = {"d": "${oc.select:dataset.depth,1}", "own": "${.d}", "root": "${..sizes}"}  # ..sizes: source.sizes
    assert source_knobs(node) == {"name", "tag", "depth"}


def test_arguments_are_the_listed_keys_and_the_source_as_it_is() -> None:
    args = datamodule_arguments(dataset_node())
    assert set(args) == {"_target_", "source", "name", "data_dir", "split_index"}
    assert args["name"] == "cora" and args["split_index"] == 3 and args["data_dir"] == "/data"  # name: both take it
    assert args["source"] == {
        "_target_": "graphbench.data.sources.node.planetoid.Planetoid",
        "name": "cora",
        "h": 0.5,
        "n": [4, 2],
    }


def test_a_declared_fold_key_is_for_the_report_not_the_datamodule() -> None:
    args = datamodule_arguments(dataset_node(fold_key="split_seed"))
    assert "fold_key" not in args and args["split_index"] == 3


def test_each_datamodule_lists_its_keys_and_its_layouts() -> None:
    many, node = ("batch_size", "batch_on_device"), ("split_index", "split_seed", "split_fractions", "normalize_features")
    assert GraphLevelDataModule.config_keys == (*COMMON_KEYS, *many)
    assert NodeLevelDataModule.config_keys == (*COMMON_KEYS, *many, *node)
    assert LinkLevelDataModule.config_keys == (*COMMON_KEYS, *many, "eval_batch_size", "use_val_edges_as_input")
    assert not GraphLevelDataModule.takes_sampler and NodeLevelDataModule.takes_sampler and LinkLevelDataModule.takes_sampler


def test_a_key_nothing_reads_is_one_clear_error() -> None:
    node = dataset_node(batchsize=4)
    assert unread_keys(node, NodeLevelDataModule) == ["batchsize"]
    with pytest.raises(
        ConfigError, match=r"^dataset.batchsize is read by nothing: it is not a key of NodeLevelDataModule \(name, "
    ):
        datamodule_arguments(node)
    # split_index is the node DataModule's, but a graph-level one reads it only through its source
    graph = dataset_node(_target_="graphbench.data.datamodules.GraphLevelDataModule")
    assert unread_keys(graph, GraphLevelDataModule) == ["split_index"]


def test_a_node_without_source_or_with_a_bad_target_is_a_config_error() -> None:
    node = dataset_node()
    del node["source"]
    with pytest.raises(ConfigError, match="has no source node"):
        datamodule_arguments(node)
    with pytest.raises(ConfigError, match="not an importable DataModule class"):
        datamodule_arguments(dataset_node(_target_="graphbench.data.datamodules.NoSuchDataModule"))
    with pytest.raises(ConfigError, match="is not a graphbench DataModule; use one of"):
        datamodule_arguments(dataset_node(_target_="graphbench.data.samplers.FullBatch"))


def test_feature_norm_is_a_flat_knob_of_every_dataset(compose_cfg) -> None:
    """`dataset.feature_norm=channelwise`, as the README writes it, reaches the DataModule."""
    from graphbench.build import build_datamodule

    for name in ("cycles", "cora", "pascalvoc-sp", "tsp"):
        cfg = compose_cfg([f"dataset={name}", "dataset.feature_norm=channelwise"])
        assert build_datamodule(cfg).feature_norm == "channelwise", name
