"""graphbench.build.search: an Optuna search's sampler and pruner from their nodes; no pruner node is
Optuna's pruner that never prunes; a node that builds nothing is one line naming it."""

from __future__ import annotations

import optuna
import pytest

from graphbench.build.search import build_search_pruner, build_search_sampler
from graphbench.vocabulary.errors import ConfigError


def test_the_sampler_and_pruner_of_their_nodes() -> None:
    sampler = build_search_sampler({"_target_": "optuna.samplers.RandomSampler", "seed": 3})
    assert isinstance(sampler, optuna.samplers.RandomSampler)
    pruner = build_search_pruner({"_target_": "optuna.pruners.MedianPruner", "n_startup_trials": 2})
    assert isinstance(pruner, optuna.pruners.MedianPruner)
    assert isinstance(build_search_pruner(None), optuna.pruners.NopPruner)


def test_a_sampler_that_does_not_build_is_one_line_naming_its_node() -> None:
    with pytest.raises(ConfigError, match=r"^could not build hydra\.sweeper\.sampler: "):
        build_search_sampler({"_target_": "optuna.samplers.NoSuchSampler"})
