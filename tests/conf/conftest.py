"""The Hydra context of the config tests: ``conf/`` initialized once per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from tests.paths import CONF


@pytest.fixture(scope="module")
def hydra_conf() -> Iterator[None]:
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        yield
    GlobalHydra.instance().clear()
