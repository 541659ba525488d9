"""Every hparams_search and hydra/launcher option composes, and the Optuna searches optimize in the
direction of their dataset's metric."""

from __future__ import annotations

import pytest
from hydra import compose
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
