"""The error classes a run ends with: one family under ``GraphbenchError``; ``Diverged`` names what and when."""

from __future__ import annotations

import pytest

from graphbench.run.errors import ConfigError, DataError, Diverged, GraphbenchError


@pytest.mark.parametrize("error", [ConfigError, DataError])
def test_config_and_data_errors_are_graphbench_errors_with_the_message_as_given(error: type[Exception]) -> None:
    exc = error("dataset.split='x' is not valid; valid: official, random")
    assert isinstance(exc, GraphbenchError)
    assert str(exc) == "dataset.split='x' is not valid; valid: official, random"


def test_diverged_names_the_quantity_and_the_epoch() -> None:
    exc = Diverged(7, "train/loss")
    assert isinstance(exc, GraphbenchError) and not isinstance(exc, ConfigError)
    assert (str(exc), exc.epoch) == ("train/loss is not finite at epoch 7", 7)
