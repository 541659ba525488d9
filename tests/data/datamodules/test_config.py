"""The dataset node scheme: flat knobs the source interpolates go to the source only, unless the
DataModule takes them too; keys read elsewhere are dropped; everything else reaches the DataModule."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from graphbench.data.datamodules import NodeLevelDataModule
from graphbench.data.datamodules.config import datamodule_arguments, init_parameters, source_knobs
from graphbench.run.errors import ConfigError


def dataset_node(**extra: object):
    root = OmegaConf.create(
        {
            "paths": {"data_dir": "/data"},
            "dataset": {
                "_target_": "graphbench.data.datamodules.NodeLevelDataModule",
                "name": "cora",
                "data_dir": "${paths.data_dir}",
                "split_index": 3,
                "homophily": 0.5,
                "module": {"_target_": "x.Y"},
                "source": {
                    "_target_": "graphbench.data.sources.node.planetoid.Planetoid",
                    "name": "${dataset.name}",
                    "h": "${dataset.homophily}",
                },
                **extra,
            },
        }
    )
    return root.dataset


def test_source_knobs_are_the_interpolated_flat_keys() -> None:
    assert source_knobs(dataset_node()) == {"name", "homophily"}


def test_arguments_keep_what_the_datamodule_takes() -> None:
    args = datamodule_arguments(dataset_node())
    assert "homophily" not in args and "module" not in args  # the source's knob; the task module's node
    assert args["name"] == "cora" and args["split_index"] == 3 and args["data_dir"] == "/data"  # name: both take it
    assert args["source"] == {"_target_": "graphbench.data.sources.node.planetoid.Planetoid", "name": "cora", "h": 0.5}


def test_a_declared_fold_key_is_for_the_report_not_the_datamodule() -> None:
    args = datamodule_arguments(dataset_node(fold_key="split_seed"))
    assert "fold_key" not in args and args["split_index"] == 3


def test_init_parameters_follow_kwargs_up_the_hierarchy() -> None:
    assert {"split_index", "name", "cache_dir", "feature_norm", "source"} <= init_parameters(NodeLevelDataModule)


def test_a_node_without_source_or_importable_target_is_a_config_error() -> None:
    node = dataset_node()
    del node["source"]
    with pytest.raises(ConfigError, match="has no source node"):
        datamodule_arguments(node)
    with pytest.raises(ConfigError, match="not an importable DataModule class"):
        datamodule_arguments(dataset_node(_target_="graphbench.data.datamodules.NoSuchDataModule"))


def test_feature_norm_is_a_flat_knob_of_every_dataset(compose_cfg) -> None:
    """`dataset.feature_norm=channelwise`, as the README writes it, reaches the DataModule."""
    from graphbench.build import build_datamodule

    for name in ("cycles", "cora", "pascalvoc-sp", "tsp"):
        cfg = compose_cfg([f"dataset={name}", "dataset.feature_norm=channelwise"])
        assert build_datamodule(cfg).feature_norm == "channelwise", name
