"""graphbench.main composes from the package ``graphbench.conf``, which in this (editable) install is
the checkout's ``conf/``: the same file tree and the same composed configs as the folder itself.
The wheel's copy is tested in tests/test_install.py."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir, initialize_config_module
from omegaconf import OmegaConf

from graphbench.conf import CONFIG_DIR
from graphbench.main import CONFIG_MODULE
from tests.paths import CONF


def test_the_config_package_is_the_checkouts_conf() -> None:
    assert CONFIG_DIR == CONF.resolve()
    assert Path(str(resources.files(CONFIG_MODULE))).resolve() == CONF.resolve()


@pytest.mark.parametrize(
    "overrides", [[], ["dataset=zinc", "model=gcn", "pe=lappe"], ["experiment=lrgb-tuned/peptides-func-gcn"]]
)
def test_the_package_composes_what_the_folder_composes(overrides: list[str]) -> None:
    with initialize_config_module(config_module=CONFIG_MODULE, version_base="1.3"):
        from_package = compose("config", overrides=overrides)
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        from_folder = compose("config", overrides=overrides)
    assert OmegaConf.to_container(from_package) == OmegaConf.to_container(from_folder)
