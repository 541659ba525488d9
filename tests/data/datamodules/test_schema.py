"""graphbench.data.datamodules.schema: the dataset keys as typed dataclasses, one per group (every
DataModule's, and each layout's), with the keys each layout refuses for the other kind of data."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest
from omegaconf import OmegaConf

from graphbench.data.datamodules.schema import (
    PAD_TO,
    DatasetConfig,
    ManyGraphsConfig,
    OneGraphLinksConfig,
    OneGraphNodesConfig,
    key_names,
)


def test_every_group_declares_its_keys_and_defaults() -> None:
    assert key_names(ManyGraphsConfig) == ("batch_size", "batch_on_device", "pad_to")
    assert ManyGraphsConfig() == ManyGraphsConfig(batch_size=None, batch_on_device=False, pad_to="none") and PAD_TO[0] == "none"
    assert OneGraphNodesConfig() == OneGraphNodesConfig(0, 0, (0.6, 0.2, 0.2), False)
    assert OneGraphLinksConfig() == OneGraphLinksConfig(eval_batch_size=None, use_val_edges_as_input=False)
    assert (ManyGraphsConfig.one_graph, OneGraphNodesConfig.one_graph, OneGraphLinksConfig.one_graph) == (False, True, True)
    with pytest.raises(FrozenInstanceError):
        ManyGraphsConfig().batch_size = 3  # type: ignore[misc]


def test_the_dataset_keys_are_an_omegaconf_structured_config() -> None:
    schema = OmegaConf.structured(DatasetConfig)
    assert OmegaConf.is_missing(schema, "name") and schema.num_workers == 0 and schema.feature_norm == "none"
    merged = OmegaConf.merge(schema, {"name": "x", "data_dir": "/d", "cache_dir": "/c", "task_type": "binary"})
    config = OmegaConf.to_object(OmegaConf.merge(merged, {"metric": "f1", "higher_is_better": "true"}))
    assert isinstance(config, DatasetConfig) and config.higher_is_better is True and str(config.data_dir) == "/d"


def test_a_layout_names_what_it_refuses_for_the_other_kind_of_data() -> None:
    assert ManyGraphsConfig.given({"batch_size": 4, "batch_on_device": False, "pad_to": "none"}) == ["batch_size"]
    assert ManyGraphsConfig.given({"batch_on_device": True, "pad_to": "buckets"}) == ["batch_on_device", "pad_to"]
    assert OneGraphNodesConfig.given({"split_index": 0, "split_seed": None, "name": "x"}) == ["split_index"]
    assert OneGraphLinksConfig.given({"eval_batch_size": None, "use_val_edges_as_input": True}) == ["use_val_edges_as_input"]
    assert ManyGraphsConfig.refusal("batch_on_device", True, "cora") == (
        "dataset.batch_on_device=true applies to graph-level datasets; cora is one graph: set it false"
    )
    assert OneGraphLinksConfig.refusal("eval_batch_size", 8, "tsp") == (
        "dataset.eval_batch_size applies to one-graph link datasets; tsp has its pairs in many graphs"
    )
