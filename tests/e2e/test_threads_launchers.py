"""Every process graphbench starts runs its OpenMP threads waiting passively, with the thread count it chose,
observed from inside each process: the OpenMP runtime that torch loads there prints its settings
(``OMP_DISPLAY_ENV=VERBOSE``: ``GOMP_SPINCOUNT = '0'`` when threads sleep at once, ``'300000'`` when they
spin first), and each run records its choice in ``results.json``. The launchers: basic (run.py itself),
joblib, submitit_local, ``trainer=ddp_cpu``, the reproduce runner and a DataLoader worker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from omegaconf import DictConfig

from graphbench.build.data import build_datamodule
from tests.conftest import FAST_CYCLES, torch_threads
from tests.paths import REPO, SHARED_DATA
from tests.run.test_threads import spin_counts

FAST = [*FAST_CYCLES, "trainer.max_epochs=1", "trainer.enable_model_summary=false"]


def fresh_env() -> dict[str, str]:
    """The caller's environment without its thread settings (graphbench must choose them), asking every
    OpenMP runtime to print its settings when it starts."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GRAPHBENCH_DATA")}
    return {**env, "OMP_DISPLAY_ENV": "VERBOSE", "WANDB_MODE": "offline", "HYDRA_FULL_ERROR": "0"}


def run_fresh(args: list[str], tmp_path: Path, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    """``python <args>`` in a fresh interpreter (not the tests' warm one, whose runtime started long before)."""
    return subprocess.run(
        [sys.executable, *args], cwd=REPO, env=fresh_env(), capture_output=True, text=True, timeout=timeout, check=False
    )


def assert_passive(output: str, processes: int) -> None:
    spins = spin_counts(output)
    assert len(spins) >= processes, output[-3000:]
    assert set(spins) == {"0"}, output[-3000:]


def assert_recorded_auto(results_json: Path, source: str = "auto") -> None:
    """The run recorded one training thread (a step of ~2,000 nodes x 16 channels), chosen by ``source``
    (``OMP_NUM_THREADS`` where the launcher sets it for its workers: joblib's loky, Lightning's DDP),
    under the passive policy that graphbench set in this process or in the one that started it."""
    threads = json.loads(results_json.read_text())["provenance"]["threads"]
    assert threads["training"]["source"] == source and threads["start"]["source"] in ("auto", source)
    for phase in ("start", "training"):
        assert threads[phase]["wait_policy"]["value"] == "PASSIVE" and threads[phase]["wait_policy"]["in_force"]
        assert threads[phase]["wait_policy"]["source"] in ("graphbench", "graphbench, inherited")
    assert threads["training"]["intra_op"] == 1


def test_basic_launcher_run_waits_passively_and_records_its_choice(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = run_fresh(["run.py", *FAST, f"paths.cache_dir={tmp_path / 'cache'}", f"hydra.run.dir={run_dir}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_passive(proc.stderr, processes=1)
    assert_recorded_auto(run_dir / "results.json")
    assert "threads: " in proc.stdout + proc.stderr and "threads for training: 1 (auto: " in proc.stdout + proc.stderr


@pytest.mark.slow
def test_joblib_jobs_wait_passively(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    args = ["run.py", "-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "seed=0,1", *FAST]
    proc = run_fresh([*args, f"paths.cache_dir={tmp_path / 'cache'}", f"hydra.sweep.dir={sweep}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_passive(proc.stderr, processes=2)  # the launching process and at least one of joblib's workers
    for job in ("0", "1"):
        assert_recorded_auto(sweep / job / "results.json", source="OMP_NUM_THREADS")  # loky: cores // n_jobs


@pytest.mark.slow
def test_submitit_local_jobs_wait_passively(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    args = ["run.py", "-m", "hydra/launcher=submitit_local", "seed=0", *FAST]
    proc = run_fresh([*args, f"paths.cache_dir={tmp_path / 'cache'}", f"hydra.sweep.dir={sweep}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    job_logs = "".join(p.read_text() for p in (sweep / ".submitit").rglob("*_log.err"))
    assert_passive(job_logs, processes=1)
    assert_recorded_auto(sweep / "0" / "results.json")


@pytest.mark.slow
def test_ddp_cpu_ranks_wait_passively_and_share_the_cpus(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = ["run.py", "trainer=ddp_cpu", "trainer.devices=2", *FAST]
    proc = run_fresh([*args, f"paths.cache_dir={tmp_path / 'cache'}", f"hydra.run.dir={run_dir}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_passive(proc.stderr, processes=2)  # rank 0 and the rank it starts
    assert_recorded_auto(run_dir / "results.json", source="OMP_NUM_THREADS")  # Lightning: cores // processes


@pytest.mark.slow
@pytest.mark.real_data
def test_reproduce_runner_runs_wait_passively(tmp_path: Path) -> None:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data root not found at {SHARED_DATA}")
    out = tmp_path / "out"
    args = ["-m", "graphbench.reproduce", "kipf-welling-2017", "--fast", "--seeds", "1", "--out", str(out)]
    proc = run_fresh([*args, f"paths.data_dir={SHARED_DATA}", f"paths.cache_dir={tmp_path / 'cache'}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    launch_logs = "".join(p.read_text() for p in out.rglob("launch.log"))
    assert_passive(launch_logs, processes=2)  # one run per cell, Cora and CiteSeer
    records = list(out.rglob("results.json"))
    assert len(records) == 2
    for record in records:
        threads = json.loads(record.read_text())["provenance"]["threads"]
        assert threads["training"]["wait_policy"]["value"] == "PASSIVE"


def test_dataloader_workers_run_one_thread_under_the_passive_policy(
    compose_cfg: Callable[..., DictConfig], tmp_path: Path
) -> None:
    """A worker forked by a graphbench loader (``dataset.num_workers``) inherits the policy and runs one thread."""
    datamodule = build_datamodule(compose_cfg([*FAST, "dataset.num_workers=1"]))
    datamodule.prepare_data()
    datamodule.setup("fit")
    loader = datamodule.train_dataloader()
    seen = tmp_path / "seen.txt"
    before = loader.worker_init_fn

    def observe(worker_id: int) -> None:
        if before is not None:
            before(worker_id)
        seen.write_text(f"{torch.get_num_threads()} {os.environ.get('OMP_WAIT_POLICY')} {os.getpid()}")

    loader.worker_init_fn = observe
    with torch_threads(2):
        next(iter(loader))
    threads, policy, pid = seen.read_text().split()
    assert (threads, policy) == ("1", "PASSIVE") and int(pid) != os.getpid()
