"""The DDP plumbing that needs no second process: processes per node, who launched the ranks, the config a worker
reads, and what surrounds a rank's Trainer (two real processes: ``tests/e2e/test_ddp.py``)."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import pytest
from lightning.fabric.plugins.environments import LightningEnvironment
from omegaconf import OmegaConf

from graphbench.run.distributed import (
    WORKER_DIR_ENV,
    cluster_plugins,
    launch_context,
    launched_externally,
    portable_config,
    processes_per_node,
)
from graphbench.vocabulary.errors import ConfigError

SCHEDULER_ENV = (
    "LOCAL_RANK",
    "SLURM_NTASKS",
    "SLURM_JOB_ID",
    "SLURM_JOB_NAME",
    "TORCHELASTIC_RUN_ID",
    "GROUP_RANK",
    WORKER_DIR_ENV,
)


@pytest.fixture
def plain_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """An environment outside any scheduler and outside any DDP run."""
    for name in SCHEDULER_ENV:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("trainer", "expected"),
    [
        ({}, 1),
        ({"strategy": "auto", "devices": 4}, 1),
        ({"strategy": "ddp", "accelerator": "cpu", "devices": 3}, 3),
        ({"strategy": "ddp_find_unused_parameters_true", "accelerator": "cpu", "devices": [0, 1]}, 2),
    ],
)
def test_processes_per_node_on_cpu(trainer: dict, expected: int) -> None:
    assert processes_per_node(trainer) == expected


def test_an_unsupported_strategy_or_device_count_is_refused_naming_the_valid_ones() -> None:
    with pytest.raises(ConfigError, match=r"^trainer.strategy=ddp_spawn is not supported: .*use one of \['ddp', "):
        processes_per_node({"strategy": "ddp_spawn"})
    with pytest.raises(ConfigError, match=r"^trainer.devices='auto': on CPU, DDP needs the number of processes"):
        processes_per_node({"strategy": "ddp", "accelerator": "cpu", "devices": "auto"})


def test_launched_externally_by_torchrun_or_a_slurm_job_with_several_tasks(plain_env: pytest.MonkeyPatch) -> None:
    assert not launched_externally()
    plain_env.setenv("LOCAL_RANK", "1")
    assert launched_externally()
    plain_env.delenv("LOCAL_RANK")
    plain_env.setenv("SLURM_JOB_ID", "7")
    plain_env.setenv("SLURM_JOB_NAME", "graphbench")
    plain_env.setenv("SLURM_NTASKS", "1")
    assert not launched_externally()  # one task: graphbench starts the ranks itself
    plain_env.setenv("SLURM_NTASKS", "4")
    assert launched_externally()


def test_a_started_worker_reads_its_place_from_lightnings_plain_environment(
    plain_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert cluster_plugins() == []
    plain_env.setenv(WORKER_DIR_ENV, str(tmp_path))
    (plugin,) = cluster_plugins()
    assert isinstance(plugin, LightningEnvironment)


def test_portable_config_replaces_resolver_values_and_keeps_references() -> None:
    cfg = OmegaConf.create({"dataset": {"name": "cora"}, "tag": "${dataset.name}", "home": "${oc.env:GB_TEST_HOME,/nowhere}"})
    portable = portable_config(cfg)
    assert OmegaConf.to_container(portable, resolve=False) == {
        "dataset": {"name": "cora"},
        "tag": "${dataset.name}",
        "home": "/nowhere",
    }


def test_launch_context_marks_a_started_rank_ready_and_is_empty_for_one_process(
    plain_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cfg = OmegaConf.create({})
    assert isinstance(launch_context(cfg, num_processes=1, run_dir=tmp_path, resume=False), nullcontext)
    plain_env.setenv("LOCAL_RANK", "1")
    assert isinstance(launch_context(cfg, num_processes=2, run_dir=tmp_path, resume=False), nullcontext)  # torchrun's
    plain_env.setenv(WORKER_DIR_ENV, str(tmp_path))
    with launch_context(cfg, num_processes=2, run_dir=tmp_path, resume=False):
        assert (tmp_path / "rank1.ready").is_file()
