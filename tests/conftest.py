"""Shared fixtures: composed configs, the real data root, offline W&B."""

from __future__ import annotations

# isort: off
# first, as run.py does: graphbench sets the OpenMP wait policy before torch loads its runtime (and it
# registers the config resolvers that paths.data_dir's default uses)
import graphbench  # noqa: F401
# isort: on

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import DictConfig, open_dict

from tests.paths import CONF, SHARED_DATA

#: the real Peptides-func sample shared by the equivalence tests (fixtures ``peptide_sample``, ``peptide_graphs``)
pytest_plugins = ["tests.peptide_sample"]

os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("WANDB_SILENT", "true")
#: set in the processes of pytest-xdist's workers
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if XDIST_WORKER:
    # the workers share the machine's cores: one torch thread each (and in the runs they start), so that
    # they do not oversubscribe them; tests that need a thread count pin it themselves
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

#: overrides that make a cycles run take seconds
FAST_CYCLES = [
    "dataset.num_train=96",
    "dataset.num_val=32",
    "dataset.num_test=32",
    "dataset.batch_size=32",
    "trainer.max_epochs=2",
    "trainer.enable_progress_bar=false",
    "model.hidden_dim=16",
    "model.num_layers=2",
]


@contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """Torch's intra-op thread count set to ``count`` inside the block, restored after it."""
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def real_data_root() -> Path:
    """``../shared/data`` beside the checkout (or GRAPHBENCH_SHARED_DATA); tests skip without it."""
    if not (SHARED_DATA / "peptides-functional").is_dir():
        pytest.skip(f"real data root not found at {SHARED_DATA} (set GRAPHBENCH_SHARED_DATA)")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def fresh_wandb_settings() -> Iterator[None]:
    """W&B keeps process-wide settings (mode, base URL, API key) from its first ``wandb.setup()``;
    tear them down after every test that used W&B, so one test's environment never leaks into the
    next (a test of online-mode failure would otherwise make a later offline run ask for a key)."""
    yield
    wandb = sys.modules.get("wandb")
    if wandb is not None:
        wandb.teardown()


@pytest.fixture(scope="session")
def shared_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One processed-data cache for the whole session, so the real datasets are processed once. Under
    pytest-xdist the workers share it (their base temps are siblings); the dataset cache's file lock
    makes a worker wait for the one processing a dataset, then load its result."""
    if XDIST_WORKER:
        shared = tmp_path_factory.getbasetemp().parent / "shared-cache"
        shared.mkdir(exist_ok=True)
        return shared
    return tmp_path_factory.mktemp("shared-cache")


@pytest.fixture(scope="module")
def hydra_conf() -> Iterator[None]:
    """Hydra initialized on ``conf/`` once per test module, for tests that ``compose`` configs themselves."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        yield
    GlobalHydra.instance().clear()


@pytest.fixture
def compose_cfg(tmp_path: Path) -> Callable[..., DictConfig]:
    """Compose conf/config.yaml with overrides, as run.py would, with run dir and cache in tmp_path."""

    def _compose(overrides: list[str] = (), run_dir: Path | None = None) -> DictConfig:
        GlobalHydra.instance().clear()
        with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
            cfg = compose("config", overrides=[f"paths.cache_dir={tmp_path / 'cache'}", *overrides], return_hydra_config=True)
        with open_dict(cfg):
            cfg.paths.output_dir = str(run_dir or tmp_path / "run")
            del cfg["hydra"]
        return cfg

    yield _compose
    GlobalHydra.instance().clear()
