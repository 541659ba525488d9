"""The plugin class of ``hydra/sweeper=optuna``: Hydra knows it (graphbench.main registers it for editable
installs too), it is built from the composed sweeper config as Hydra builds it, and importing it, which
Hydra does at every start, does not import Optuna."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.plugins import Plugins
from hydra.plugins.sweeper import Sweeper
from hydra.utils import instantiate

import graphbench.main  # noqa: F401  (registers the plugin)
from hydra_plugins.graphbench_optuna_sweeper.optuna_sweeper import OptunaSweeper
from tests.paths import CONF, REPO

TARGET = "hydra_plugins.graphbench_optuna_sweeper.optuna_sweeper.OptunaSweeper"


@pytest.fixture
def hydra_conf() -> Iterator[None]:
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        yield
    GlobalHydra.instance().clear()


def sweeper_of(overrides: list[str]) -> OptunaSweeper:
    """The sweeper built from the composed ``hydra.sweeper`` node, as Hydra builds it (``_recursive_: false``)."""
    sweeper = instantiate(compose("config", overrides=overrides, return_hydra_config=True).hydra.sweeper)
    assert isinstance(sweeper, OptunaSweeper)
    return sweeper


def test_hydra_knows_the_sweeper(hydra_conf: None) -> None:
    assert OptunaSweeper in Plugins.instance().discover(Sweeper)


def test_the_preset_becomes_the_search_settings(hydra_conf: None) -> None:
    settings = sweeper_of(["hparams_search=cycles_optuna", "hydra/sweeper/pruner=median"]).settings
    assert (settings.directions, settings.objectives, settings.storage) == (["maximize"], None, None)
    assert (settings.study_name, settings.n_trials, settings.n_jobs, settings.max_failure_rate) == ("cycles-gine", 20, 1, 1.0)
    assert settings.sampler == {"_target_": "optuna.samplers.TPESampler", "seed": 0, "n_startup_trials": 5, "multivariate": False}
    assert settings.pruner is not None and settings.pruner["_target_"] == "optuna.pruners.MedianPruner"
    assert settings.params["optimizer.lr"] == "tag(log, interval(1e-4, 1e-2))"


def test_several_directions_take_as_many_objectives(hydra_conf: None) -> None:
    overrides = ["hydra/sweeper=optuna", "hydra/sweeper/sampler=nsgaii", "hydra.sweeper.direction=[maximize,minimize]"]
    settings = sweeper_of([*overrides, "hydra.sweeper.objectives=[val/accuracy,num_params]"]).settings
    assert (settings.directions, settings.objectives, settings.pruner) == (
        ["maximize", "minimize"],
        ["val/accuracy", "num_params"],
        None,
    )


def test_importing_the_plugin_leaves_optuna_unimported() -> None:
    code = "import sys, hydra_plugins.graphbench_optuna_sweeper.optuna_sweeper; print('optuna' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
