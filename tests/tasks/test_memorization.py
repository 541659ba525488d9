"""task=memorization: its arguments checked before anything is built (a whole run, through the CLI:
``tests/e2e/test_memorization_cli.py``)."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from graphbench.run.errors import ConfigError
from graphbench.tasks.memorization import run_memorization


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"checkpoint": "worst"}, r"^task.checkpoint='worst' is not valid; valid: \["),
        ({"num_seeds": 0}, r"^task.num_seeds must be a positive integer, got 0$"),
        ({"num_seeds": True}, r"^task.num_seeds must be a positive integer, got True$"),
        ({"tau": "high"}, r"^task.tau must be a number, got 'high'$"),
    ],
)
def test_bad_arguments_are_refused_before_anything_is_built(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        run_memorization(OmegaConf.create({}), **kwargs)
