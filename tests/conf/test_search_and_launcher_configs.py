"""Every hparams_search and hydra/launcher option composes, the Optuna searches optimize in the
direction of their dataset's metric, and every sampler and pruner of the sweeper builds."""

from __future__ import annotations

import optuna
import pytest
from hydra import compose
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from graphbench.sweep.compose import dataset_metric
from tests.paths import CONF


def options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


@pytest.mark.parametrize("search", options("hparams_search"))
def test_hparams_search_composes_with_the_direction_of_its_dataset(hydra_conf: None, search: str) -> None:
    cfg: DictConfig = compose("config", overrides=[f"hparams_search={search}"], return_hydra_config=True)
    sweeper = cfg.hydra.sweeper
    assert sweeper._target_.endswith("OptunaSweeper")
    assert sweeper.params, "a search needs hydra.sweeper.params"
    _, higher_is_better = dataset_metric(cfg.dataset)
    assert sweeper.direction == ("maximize" if higher_is_better else "minimize")


# graphbench silences Hydra's warning about these files sharing the plugin's names; pytest resets that filter
@pytest.mark.filterwarnings(r"ignore:\s*'hydra/launcher/submitit_(local|slurm)' is validated against ConfigStore schema")
@pytest.mark.parametrize("launcher", options("hydra/launcher"))
def test_launcher_composes_as_a_submitit_launcher(hydra_conf: None, launcher: str) -> None:
    cfg = compose("config", overrides=[f"hydra/launcher={launcher}"], return_hydra_config=True)
    assert "submitit" in cfg.hydra.launcher._target_  # run.py defaults resume=auto under these
    launcher_cfg = OmegaConf.to_container(cfg.hydra.launcher, resolve=False)
    assert launcher_cfg["submitit_folder"] == "${hydra.sweep.dir}/.submitit/%j"  # submitit's files inside the sweep dir


@pytest.mark.parametrize("sampler", options("hydra/sweeper/sampler"))
@pytest.mark.parametrize("pruner", options("hydra/sweeper/pruner"))
def test_every_sampler_and_pruner_of_the_sweeper_builds(hydra_conf: None, sampler: str, pruner: str) -> None:
    """``hydra/sweeper/sampler=...`` and ``hydra/sweeper/pruner=...`` on the command line give the sweeper
    nodes Optuna builds; a preset keeps its own keys under a pruner chosen on the command line."""
    overrides = ["hydra/sweeper=optuna", f"hydra/sweeper/sampler={sampler}", f"hydra/sweeper/pruner={pruner}"]
    sweeper = compose("config", overrides=overrides, return_hydra_config=True).hydra.sweeper
    assert sweeper._target_ == "hydra_plugins.graphbench_optuna_sweeper.optuna_sweeper.OptunaSweeper"
    assert isinstance(instantiate(sweeper.sampler), optuna.samplers.BaseSampler)
    assert isinstance(instantiate(sweeper.pruner), optuna.pruners.BasePruner)
    assert (sweeper.study_name, sweeper.n_trials, sweeper.n_jobs, sweeper.storage) == (None, 20, 1, None)
    preset = compose(
        "config", overrides=["hparams_search=cycles_optuna", f"hydra/sweeper/pruner={pruner}"], return_hydra_config=True
    )
    assert isinstance(instantiate(preset.hydra.sweeper.pruner), type(instantiate(sweeper.pruner)))
    assert (preset.hydra.sweeper.study_name, preset.hydra.sweeper.sampler.n_startup_trials) == ("cycles-gine", 5)
