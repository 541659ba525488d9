"""The error classes a run ends with: one family under ``GraphbenchError``; ``Diverged`` names what and when."""

from __future__ import annotations

import pytest

from graphbench.vocabulary.errors import ArgumentError, ConfigError, DataError, Diverged, GraphbenchError


@pytest.mark.parametrize("error", [ConfigError, DataError])
def test_config_and_data_errors_are_graphbench_errors_with_the_message_as_given(error: type[Exception]) -> None:
    exc = error("dataset.split='x' is not valid; valid: official, random")
    assert isinstance(exc, GraphbenchError)
    assert str(exc) == "dataset.split='x' is not valid; valid: official, random"


def test_diverged_names_the_quantity_and_the_epoch() -> None:
    exc = Diverged(7, "train/loss")
    assert isinstance(exc, GraphbenchError) and not isinstance(exc, ConfigError)
    assert (str(exc), exc.epoch) == ("train/loss is not finite at epoch 7", 7)


def test_an_argument_error_names_its_argument_and_takes_the_path_of_its_owner_and_of_its_node() -> None:
    exc = ArgumentError("num_convs=0 must be >= 1")
    assert isinstance(exc, ConfigError) and isinstance(exc, ValueError)
    assert exc.argument == "num_convs"
    under = exc.under("layer")  # the network that built the layer from its `layer` argument
    assert isinstance(under, ArgumentError) and (str(under), under.argument) == ("layer.num_convs=0 must be >= 1", "layer")
    located = under.at("model")  # the builder of the model node
    assert type(located) is ConfigError and str(located) == "model.layer.num_convs=0 must be >= 1"
    assert ArgumentError("batch_size is missing: zinc has many graphs").argument == "batch_size"
