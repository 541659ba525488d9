"""``build``: a config node instantiated without its metadata keys; failures as one ``ConfigError`` naming what
failed, graphbench's own errors passed through unchanged."""

from __future__ import annotations

import pytest
import torch
from omegaconf import OmegaConf

from graphbench.config.instantiate import METADATA_KEYS, LocatedPartial, build
from graphbench.vocabulary.errors import ArgumentError, ConfigError, DataError


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


class Padded:
    """A class that refuses one value of its own argument, naming only that argument."""

    def __init__(self, pad_to: str = "none", width: int = 1) -> None:
        if pad_to not in ("none", "buckets"):
            raise ArgumentError(f"pad_to={pad_to!r} is not one of ['none', 'buckets']")
        if width < 1:
            raise ArgumentError(f"width={width} must be >= 1")


NODE = {"_target_": "tests.config.test_instantiate.Padded"}


def test_an_argument_error_gets_the_path_of_the_node_it_was_built_from() -> None:
    with pytest.raises(ConfigError, match=r"^dataset.pad_to='xyz' is not one of \['none', 'buckets'\]$"):
        build(OmegaConf.create({**NODE, "pad_to": "xyz"}), "dataset 'toy': its source", path="dataset")
    with pytest.raises(ConfigError, match=r"^pe.encoder.pad_to='xyz' is not one of"):  # `what` is a config path itself
        build(OmegaConf.create({**NODE, "pad_to": "xyz"}), "pe.encoder")


def test_an_argument_the_caller_passes_keeps_its_owners_words() -> None:
    """``width`` is no key of the node: its builder passed it, and only the builder knows where it came from."""
    with pytest.raises(ArgumentError, match=r"^width=0 must be >= 1$"):
        build(OmegaConf.create(NODE), "head", width=0)


def test_a_partial_names_the_node_when_its_object_is_made() -> None:
    make = build(OmegaConf.create({**NODE, "_partial_": True, "pad_to": "fixed"}), "head")
    assert isinstance(make, LocatedPartial) and make.keywords == {"pad_to": "fixed"}
    with pytest.raises(ConfigError, match=r"^head.pad_to='fixed' is not one of") as err:
        make(width=2)
    assert type(err.value) is ConfigError  # located: a builder further out leaves it as it is
    with pytest.raises(ArgumentError, match=r"^width=0 must be >= 1$"):
        build(OmegaConf.create({**NODE, "_partial_": True}), "head")(width=0)


def test_without_a_config_path_an_argument_error_passes_through_unchanged() -> None:
    with pytest.raises(ArgumentError, match=r"^pad_to='xyz' is not one of"):
        build(OmegaConf.create({**NODE, "pad_to": "xyz"}), "the padded thing")
