"""Optuna searches end to end through ``run.py -m``: a median-pruned search on cycles, several workers
started separately on one study (a journal file; a PostgreSQL server started for the test), each
trial run once, its value in the study equal to its run's results.json, and the report listing the
pruned trials apart."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import optuna
import pytest
import yaml

from graphbench.run.optuna_storage import open_storage
from graphbench.run.record import RESULTS_FILENAME, RunRecord
from tests.conftest import FAST_CYCLES
from tests.e2e.test_cli import run_cli
from tests.warm_python import run_python

#: a search on cycles small enough for a test; two epochs, so the median pruner can stop a trial after the first
WORKER = ["-m", "hparams_search=cycles_optuna", "hydra/sweeper/pruner=median", "hydra.sweeper.pruner.n_startup_trials=1"]
WORKER += ["hydra.sweeper.sampler.seed=null", *FAST_CYCLES]


def run_workers(count: int, storage: str, n_trials: int, tmp_path: Path) -> list[subprocess.CompletedProcess[str]]:
    """``count`` workers started at once, each ``run.py -m`` in a sweep directory of its own (tmp/w<i>),
    sharing ``storage`` and the study name."""
    args = [*WORKER, f"hydra.sweeper.storage={storage}", f"hydra.sweeper.n_trials={n_trials}"]
    with ThreadPoolExecutor(count) as pool:
        futures = [pool.submit(run_cli, [*args, f"hydra.sweep.dir={tmp_path / f'w{i}'}"], tmp_path) for i in range(count)]
        return [f.result() for f in futures]


def check_one_study(storage: str, n_trials: int, tmp_path: Path, workers: int) -> None:
    """Exactly ``n_trials`` completed or pruned trials, each run once (one results.json per trial number,
    over every worker's sweep directory), each trial's value its run's results.json value; any other
    trial is one a worker asked past n_trials, failed unrun."""
    study = optuna.load_study(study_name="cycles-gine", storage=open_storage(storage))
    finished = [t for t in study.trials if t.state.name in ("COMPLETE", "PRUNED")]
    assert sorted(t.number for t in finished) == list(range(n_trials))
    surplus = [t for t in study.trials if t.number >= n_trials]
    assert len(surplus) < workers and all(
        t.state.name == "FAIL" and t.user_attrs["status"].startswith("not run") for t in surplus
    )
    runs: dict[int, list[RunRecord]] = {}
    for results in tmp_path.glob(f"w*/*/{RESULTS_FILENAME}"):
        record = RunRecord.read(results)
        assert record.config is not None
        runs.setdefault(record.config["optuna_trial"]["number"], []).append(record)
    assert sorted(runs) == list(range(n_trials)) and all(len(r) == 1 for r in runs.values())  # no trial run twice
    ran_by = {Path(str(runs[t.number][0].run_dir)).parent.name for t in finished}
    assert len(ran_by) > 1  # the workers shared the study
    for trial in finished:
        (record,) = runs[trial.number]
        assert trial.user_attrs["run_dir"] == record.run_dir and trial.user_attrs["status"] == record.status
        assert trial.value == record.metrics["val/accuracy"]  # completed or pruned: its run's best-epoch value
        assert (trial.state.name == "PRUNED") == record.status.startswith("pruned at epoch ")


@pytest.mark.slow
def test_a_median_pruned_search_on_cycles_prunes_reports_its_best_trial_and_the_report_shows_the_pruned_apart(
    tmp_path: Path,
) -> None:
    sweep_dir = tmp_path / "sweep"
    search = ["-m", "hparams_search=cycles_optuna", "hydra/sweeper/pruner=median", "hydra.sweeper.pruner.n_startup_trials=2"]
    small = ["dataset.num_train=128", "dataset.num_val=64", "dataset.num_test=32", "dataset.batch_size=32"]
    small += ["model.hidden_dim=16", "model.num_layers=2", "trainer.max_epochs=4", "trainer.enable_progress_bar=false"]
    proc = run_cli([*search, "hydra.sweeper.n_trials=6", *small, f"hydra.sweep.dir={sweep_dir}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = {n: RunRecord.read(sweep_dir / str(n) / RESULTS_FILENAME) for n in range(6)}
    pruned = sorted(n for n, r in records.items() if r.status.startswith("pruned at epoch "))
    completed = sorted(n for n, r in records.items() if r.completed)
    assert pruned and len(pruned) + len(completed) == 6
    assert f"multirun: {len(completed)} of 6 jobs completed, {len(pruned)} pruned by the Optuna search" in proc.stdout
    assert proc.stderr.count("not completed") == 0
    best = yaml.safe_load((sweep_dir / "optimization_results.yaml").read_text())
    assert best["best_trial"] in completed
    assert best["best_value"] == max(records[n].metrics["val/accuracy"] for n in completed)
    searched = [f"{key}={value!r}" for key, value in best["best_params"].items()]
    assert best["best_overrides"][-len(searched) :] == searched
    assert f"Best overrides: {' '.join(best['best_overrides'])}\n" in proc.stdout
    for n in pruned:  # a pruned trial stopped before its last epoch or at it, and was tested at its best epoch
        assert records[n].epochs_trained == int(records[n].status.rsplit(" ", 1)[1]) + 1 <= 4
        assert "test/accuracy" in records[n].metrics

    report = run_python(["-m", "graphbench.report", str(sweep_dir)], tmp_path, os.environ)
    assert report.returncode == 0, report.stderr
    table, listed = report.stdout.split("Failed runs: none.")
    assert f"| {len(completed)} (1 × {len(completed)}) |" not in table  # each trial is its own configuration
    assert table.count("(1 × 1)") == len(completed)
    assert f"Pruned trials ({len(pruned)}), stopped early by the Optuna search's pruner, not in the tables:" in listed
    assert all(f"{sweep_dir / str(n)}: pruned at epoch " in listed for n in pruned)


@pytest.mark.slow
def test_three_workers_on_one_journal_file_run_each_trial_once(tmp_path: Path) -> None:
    storage = str(tmp_path / "cycles.journal")
    procs = run_workers(3, storage, 6, tmp_path)
    for proc in procs:
        assert proc.returncode == 0, proc.stderr[-3000:]
    check_one_study(storage, 6, tmp_path, workers=3)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def postgres_bin() -> Path | None:
    """The folder of Debian's ``initdb`` and ``pg_ctl`` (package postgresql), or None."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    return versions[-1].parent if versions else None


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server in a temporary folder, on a free port of 127.0.0.1, its superuser ``postgres``
    trusted; started as ``nobody`` when the test runs as root (the server refuses root)."""
    bindir = postgres_bin()
    if bindir is None:
        pytest.skip("PostgreSQL's server is not installed (Debian: apt-get install postgresql; .ci/run installs it)")
    folder = Path(tempfile.mkdtemp(prefix="graphbench-postgres-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(folder, nobody.pw_uid, nobody.pw_gid)
        as_user = ["runuser", "-u", "nobody", "--"]
    data, port = folder / "data", free_port()
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
    try:
        subprocess.run(
            [*as_user, str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust"], check=True, capture_output=True
        )
        start = [
            *as_user,
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(folder / "server.log"),
            "-o",
            options,
            "-w",
            "start",
        ]
        subprocess.run(start, check=True, capture_output=True)
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_two_workers_on_one_postgresql_study_run_each_trial_once(postgres_url: str, tmp_path: Path) -> None:
    procs = run_workers(2, postgres_url, 4, tmp_path)
    for proc in procs:
        assert proc.returncode == 0, proc.stderr[-3000:]
    check_one_study(postgres_url, 4, tmp_path, workers=2)


@pytest.mark.slow
def test_a_batch_of_n_jobs_trials_runs_as_one_submitit_array(tmp_path: Path) -> None:
    """hydra.sweeper.n_jobs=2 under submitit_local: the batch is one launch of two jobs (SLURM's array
    machinery without a scheduler), each trial told what its results.json says."""
    sweep_dir = tmp_path / "sweep"
    args = ["-m", "hparams_search=cycles_optuna", "hydra/launcher=submitit_local", "hydra.sweeper.n_jobs=2"]
    proc = run_cli([*args, "hydra.sweeper.n_trials=2", *FAST_CYCLES, f"hydra.sweep.dir={sweep_dir}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("Submitit 'local' sweep output dir") == 1  # one launch
    assert "\t#0 : " in proc.stdout and "\t#1 : " in proc.stdout  # of two jobs
    study = optuna.load_study(study_name="cycles-gine", storage=open_storage(str(sweep_dir / "optuna.journal")))
    assert [t.state.name for t in study.trials] == ["COMPLETE"] * 2
    for trial in study.trials:
        record = RunRecord.read(sweep_dir / str(trial.number) / RESULTS_FILENAME)
        assert trial.value == record.metrics["val/accuracy"] and trial.user_attrs["run_dir"] == record.run_dir
