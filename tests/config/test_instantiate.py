"""``build``: a config node instantiated without its metadata keys; failures as one ``ConfigError`` naming what
failed, graphbench's own errors passed through unchanged."""

from __future__ import annotations

import pytest
import torch
from omegaconf import OmegaConf

from graphbench.config.instantiate import METADATA_KEYS, build
from graphbench.run.errors import ConfigError, DataError


def test_metadata_keys_are_dropped_and_interpolations_resolved() -> None:
    cfg = OmegaConf.create(
        {"width": 3, "node": {"_target_": "torch.nn.Linear", "name": "lin", "in_features": "${width}", "out_features": 2}}
    )
    layer = build(cfg.node, "the layer", drop=METADATA_KEYS, bias=False)
    assert isinstance(layer, torch.nn.Linear)
    assert (layer.in_features, layer.out_features, layer.bias) == (3, 2, None)


def test_a_failing_constructor_is_one_config_error_naming_what() -> None:
    node = OmegaConf.create({"_target_": "torch.nn.Linear", "in_features": 2, "out_features": 2, "colour": "red"})
    with pytest.raises(ConfigError, match=r"^could not build the layer: .*colour") as err:
        build(node, "the layer")
    assert "\n" not in str(err.value).strip()


def test_graphbench_errors_pass_through_unchanged() -> None:
    node = OmegaConf.create({"_target_": "tests.config.test_instantiate.missing_raw_files"})
    with pytest.raises(DataError, match=r"^raw files missing: x.csv$"):
        build(node, "the dataset")


def missing_raw_files() -> None:
    raise DataError("raw files missing: x.csv")
