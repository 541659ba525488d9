"""The wait policy, the CPU allowance (affinity, cgroup quotas) and the thread choices of graphbench.run.threads."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from graphbench.run.threads import (
    PARALLEL_WORK,
    SET_BY_GRAPHBENCH,
    WAIT_POLICY,
    CpuAllowance,
    cgroup_quota,
    prepare_process,
    start_threads,
    threads_setting,
    training_threads,
)
from graphbench.vocabulary.errors import ConfigError


def test_prepare_process_sets_passive_waiting_before_torch_loads() -> None:
    environ: dict[str, str] = {}
    policy = prepare_process(environ, loaded={})
    assert environ == {"OMP_WAIT_POLICY": WAIT_POLICY, SET_BY_GRAPHBENCH: WAIT_POLICY} and WAIT_POLICY == "PASSIVE"
    assert (policy.value, policy.source, policy.in_force) == ("PASSIVE", "graphbench", True)
    child = prepare_process(dict(environ), loaded={})  # a process started by this one
    assert (child.value, child.source, child.in_force) == ("PASSIVE", "graphbench, inherited", True)


def test_prepare_process_keeps_the_users_policy() -> None:
    environ = {"OMP_WAIT_POLICY": "ACTIVE"}
    policy = prepare_process(environ, loaded={})
    assert environ == {"OMP_WAIT_POLICY": "ACTIVE"}
    assert (policy.value, policy.source, policy.in_force) == ("ACTIVE", "environment", True)


def test_prepare_process_after_torch_says_the_policy_is_not_in_force() -> None:
    environ: dict[str, str] = {}
    policy = prepare_process(environ, loaded={"torch": object()})
    assert environ == {} and policy.value is None and not policy.in_force
    assert "torch was imported before graphbench" in policy.source


def spin_counts(stderr: str) -> list[str]:
    """The ``GOMP_SPINCOUNT`` that each OpenMP runtime started in a process reported (``OMP_DISPLAY_ENV=VERBOSE``):
    0 when its threads wait passively, 300000 (libgomp's default) when they spin first."""
    return re.findall(r"GOMP_SPINCOUNT = '(\d+)'", stderr)


@pytest.mark.parametrize(("imports", "spin"), [("graphbench, torch", "0"), ("torch, graphbench", "300000")])
def test_the_policy_is_in_force_only_when_graphbench_is_imported_before_torch(imports: str, spin: str) -> None:
    """Observed in the process itself: the OpenMP runtime torch loads prints its settings as it starts."""
    code = f"import {imports}; torch.ones(4).sum()"
    env = {"PATH": "/usr/bin:/bin", "OMP_DISPLAY_ENV": "VERBOSE", "HOME": str(Path.home())}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, check=True)
    assert spin_counts(out.stderr) == [spin], out.stderr


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_cgroup_v2_quota_is_the_tightest_along_the_path(tmp_path: Path) -> None:
    proc = write(tmp_path / "proc", "0::/slice/job\n")
    root = tmp_path / "cg"
    write(root / "slice" / "job" / "cpu.max", "150000 100000\n")
    write(root / "slice" / "cpu.max", "max 100000\n")
    assert cgroup_quota(proc, root) == 1.5
    write(root / "slice" / "cpu.max", "100000 100000\n")
    assert cgroup_quota(proc, root) == 1.0


def test_cgroup_v2_without_a_quota(tmp_path: Path) -> None:
    proc = write(tmp_path / "proc", "0::/\n")
    write(tmp_path / "cg" / "cpu.max", "max 100000\n")
    assert cgroup_quota(proc, tmp_path / "cg") is None


def test_cgroup_v1_quota_and_its_absence(tmp_path: Path) -> None:
    proc = write(tmp_path / "proc", "4:memory:/x\n3:cpu,cpuacct:/job\n")
    root = tmp_path / "cg"
    write(root / "cpu,cpuacct" / "job" / "cpu.cfs_quota_us", "250000\n")
    write(root / "cpu,cpuacct" / "job" / "cpu.cfs_period_us", "100000\n")
    assert cgroup_quota(proc, root) == 2.5
    write(root / "cpu,cpuacct" / "job" / "cpu.cfs_quota_us", "-1\n")
    assert cgroup_quota(proc, root) is None


def test_cgroup_path_hidden_inside_a_container_reads_the_mount_itself(tmp_path: Path) -> None:
    proc = write(tmp_path / "proc", "0::/host/only/path\n")
    write(tmp_path / "cg" / "cpu.max", "200000 100000\n")
    assert cgroup_quota(proc, tmp_path / "cg") == 2.0


def test_unreadable_cgroup_file_means_no_quota(tmp_path: Path) -> None:
    assert cgroup_quota(tmp_path / "missing", tmp_path) is None


@pytest.mark.parametrize(("affinity", "quota", "usable"), [(2, None, 2), (4, 1.5, 1), (2, 0.5, 1), (8, 3.9, 3), (2, 16.0, 2)])
def test_usable_cpus_are_the_affinity_capped_by_the_quota(affinity: int, quota: float | None, usable: int) -> None:
    assert CpuAllowance(affinity, quota).usable == usable


@pytest.mark.parametrize(("value", "setting"), [("auto", "auto"), (None, "auto"), (3, 3), ("2", 2)])
def test_threads_setting(value: object, setting: str | int) -> None:
    assert threads_setting(value) == setting


@pytest.mark.parametrize("value", [0, "-1", "many", 1.5])
def test_threads_setting_refuses_bad_values_in_one_line(value: object) -> None:
    with pytest.raises(ConfigError, match=r"^threads=.* is not valid; valid: auto, or a number of threads >= 1$"):
        threads_setting(value)


FOUR = CpuAllowance(4, None)


def test_config_count_wins_over_the_environment() -> None:
    choice = training_threads(3, 10, 10, environ={"OMP_NUM_THREADS": "1"}, allowance=FOUR)
    assert (choice.threads, choice.source) == (3, "threads=3")


def test_environment_count_wins_over_auto() -> None:
    choice = start_threads("auto", environ={"OMP_NUM_THREADS": "1"}, allowance=FOUR)
    assert (choice.threads, choice.source) == (1, "OMP_NUM_THREADS")
    with pytest.raises(ConfigError, match="OMP_NUM_THREADS='x' is not valid"):
        start_threads("auto", environ={"OMP_NUM_THREADS": "x"}, allowance=FOUR)


def test_auto_starts_on_the_usable_cpus_shared_by_the_processes() -> None:
    assert start_threads("auto", environ={}, allowance=FOUR).threads == 4
    assert start_threads("auto", processes=2, environ={}, allowance=FOUR).threads == 2
    assert start_threads("auto", processes=8, environ={}, allowance=FOUR).threads == 1


def test_auto_trains_small_steps_on_one_thread_and_large_ones_on_all() -> None:
    width = 64
    small = training_threads("auto", PARALLEL_WORK // width - 1, width, environ={}, allowance=FOUR)
    large = training_threads("auto", PARALLEL_WORK // width, width, environ={}, allowance=FOUR)
    assert (small.threads, large.threads) == (1, 4)
    assert training_threads("auto", PARALLEL_WORK, width, processes=2, environ={}, allowance=FOUR).threads == 2
    assert "under the" in small.reason and "every usable CPU pays" in large.reason


def test_auto_on_an_accelerator_or_without_a_node_count_keeps_the_usable_cpus() -> None:
    assert training_threads("auto", 10, 10, on_accelerator=True, environ={}, allowance=FOUR).threads == 4
    assert training_threads("auto", None, 10, environ={}, allowance=FOUR).threads == 4


def test_choice_is_recorded_with_its_reason_and_policy() -> None:
    choice = start_threads(2, environ={}, allowance=CpuAllowance(4, 2.5))
    record = choice.to_dict()
    assert record["intra_op"] == 2 and record["source"] == "threads=2"
    assert (record["usable_cpus"], record["affinity_cpus"], record["cgroup_quota"]) == (2, 4, 2.5)
    assert set(record["wait_policy"]) == {"value", "source", "in_force"}
    assert choice.describe().startswith("2 (threads=2: set in the config); ")
