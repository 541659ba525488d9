"""Job arrays and sweepers end to end: submitit_local (SLURM's machinery without a scheduler), the
SLURM launcher config as submitit renders it into sbatch, and Optuna through graphbench's sweeper (more in test_optuna_search)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import submitit.slurm.slurm
import yaml
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.utils import instantiate

from tests.conftest import FAST_CYCLES
from tests.e2e.test_cli import run_cli
from tests.paths import CONF

FAST = [*FAST_CYCLES, "trainer.max_epochs=1"]


def results(job_dir: Path) -> dict:
    return json.loads((job_dir / "results.json").read_text())


SUBMITIT_LOCAL = ["-m", "hydra/launcher=submitit_local", "dataset=cycles", "model=gcn,gine", *FAST]


@pytest.fixture(scope="module")
def submitit_sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One submitit_local array of two jobs (gcn, gine), shared by the tests of its first launch and its relaunch."""
    tmp_path = tmp_path_factory.mktemp("submitit")
    sweep_dir = tmp_path / "sweep"
    return sweep_dir, run_cli([*SUBMITIT_LOCAL, f"hydra.sweep.dir={sweep_dir}"], tmp_path)


@pytest.mark.slow
def test_submitit_local_array_completes_every_job(submitit_sweep: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    sweep_dir, proc = submitit_sweep
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "multirun: 2 of 2 jobs completed" in proc.stdout
    assert "ConfigStore schema" not in proc.stderr  # graphbench's launcher configs replace the plugin's quietly
    for job, model in (("0", "gcn"), ("1", "gine")):
        record = results(sweep_dir / job)
        assert record["status"] == "completed"
        assert record["config"]["model"]["name"] == model
        assert record["metrics"]["val/accuracy"] is not None
    assert (sweep_dir / ".submitit").is_dir()  # submitit's pickles and job logs stay beside the job directories


@pytest.mark.slow
def test_submitit_local_relaunch_skips_completed_jobs(submitit_sweep: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    """The same array again (a requeue, or a user relaunching a sweep that was cut short): resume=auto,
    the default under submitit, skips the runs that completed."""
    sweep_dir, first = submitit_sweep
    assert first.returncode == 0, first.stderr[-3000:]
    before = {job: (sweep_dir / job / "results.json").read_bytes() for job in ("0", "1")}
    logs = {job: (sweep_dir / job / "run.log").read_bytes() for job in ("0", "1")}
    proc = run_cli([*SUBMITIT_LOCAL, f"hydra.sweep.dir={sweep_dir}"], sweep_dir.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # the jobs' own "skipped" lines go to submitit's output files: the summary says it on the console
    assert f"multirun: 2 of 2 jobs completed, 2 of them skipped as completed before (resume=auto) ({sweep_dir})" in proc.stdout
    skipped = [line for line in proc.stdout.splitlines() if line.startswith("  skipped: ")]
    assert [line.split(" [")[0] for line in skipped] == ["  skipped: 0", "  skipped: 1"]
    assert " model=gcn " in skipped[0] and " model=gine " in skipped[1] and skipped[0].endswith("]: already completed")
    for job in ("0", "1"):
        assert (sweep_dir / job / "results.json").read_bytes() == before[job]
        # not rerun: its log gains only submitit's own lines (its job logger writes to the job's log file)
        log = (sweep_dir / job / "run.log").read_bytes()
        assert log.startswith(logs[job])
        assert all("[submitit]" in line for line in log[len(logs[job]) :].decode().splitlines())
    outputs = [path.read_text() for path in (sweep_dir / ".submitit").rglob("*.out")]
    assert sum("already holds a completed run" in text for text in outputs) == 2


# graphbench silences Hydra's warning about conf/hydra/launcher/submitit_slurm.yaml; pytest resets that filter
@pytest.mark.filterwarnings(r"ignore:\s*'hydra/launcher/submitit_slurm' is validated against ConfigStore schema")
def test_slurm_launcher_config_becomes_an_sbatch_job_array(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No cluster here: submitit renders the sbatch script from conf/hydra/launcher/submitit_slurm.yaml and
    the test stops it at the point where it would call sbatch."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "srun").write_text("#!/bin/sh\nexit 1\n")
    (tmp_path / "bin" / "srun").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")  # submitit looks for srun
    sweep_dir = tmp_path / "sweep"
    overrides = [
        "hydra/launcher=submitit_slurm",
        "hydra.launcher.partition=gpu",
        "hydra.launcher.array_parallelism=2",
        "hydra.launcher.setup=['source .venv/bin/activate']",
        f"hydra.sweep.dir={sweep_dir}",
    ]
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=overrides, return_hydra_config=True)
    GlobalHydra.instance().clear()
    launcher = instantiate(cfg.hydra.launcher)
    launcher.setup(hydra_context=None, task_function=lambda _: None, config=cfg)
    submitted: dict[str, object] = {}

    class Submitted(Exception):
        pass

    def capture(self: submitit.slurm.slurm.SlurmExecutor, command: str) -> None:
        submitted.update(sbatch=self._make_submission_file_text(command, "uid"), max_num_timeout=self.max_num_timeout)
        raise Submitted

    monkeypatch.setattr(submitit.slurm.slurm.SlurmExecutor, "_submit_command", capture)
    with pytest.raises(Submitted):
        launcher.launch([["model=gcn"], ["model=gine"], ["model=gatedgcn"]], initial_job_idx=0)
    sbatch = str(submitted["sbatch"])
    for line in (
        "#SBATCH --array=0-2%2",
        "#SBATCH --partition=gpu",
        "#SBATCH --time=240",
        "#SBATCH --gpus-per-node=1",
        "#SBATCH --ntasks-per-node=1",
        "#SBATCH --cpus-per-task=4",
        "#SBATCH --mem=32GB",
        "#SBATCH --signal=USR2@120",
        f"#SBATCH --output={sweep_dir}/.submitit/%A_%a/%A_%a_0_log.out",
        "source .venv/bin/activate",
    ):
        assert line in sbatch.splitlines(), f"{line!r} not in\n{sbatch}"
    assert submitted["max_num_timeout"] == 3  # a timed-out or preempted job is requeued (and resumes)


@pytest.mark.slow
def test_optuna_sweep_of_four_trials_prints_its_best_trial(tmp_path: Path) -> None:
    sweep_dir = tmp_path / "sweep"
    proc = run_cli(
        ["-m", "hparams_search=cycles_optuna", "hydra.sweeper.n_trials=4", *FAST, f"hydra.sweep.dir={sweep_dir}"], tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Best parameters: {" in proc.stdout
    assert "Best value: " in proc.stdout
    assert "multirun: 4 of 4 jobs completed" in proc.stdout
    values = [results(sweep_dir / str(job))["metrics"]["val/accuracy"] for job in range(4)]
    best = yaml.safe_load((sweep_dir / "optimization_results.yaml").read_text())
    assert best["best_value"] == pytest.approx(max(values))  # run.py returned the monitored metric at the best epoch
    # model.hidden_dim and model.num_layers are fixed by the command line, the rest is searched
    assert set(best["best_params"]) == {"optimizer.lr", "optimizer.weight_decay", "model.dropout"}
    assert 1e-4 <= best["best_params"]["optimizer.lr"] <= 1e-2


@pytest.mark.slow
def test_optuna_study_in_sqlite_continues_across_invocations(tmp_path: Path) -> None:
    """n_trials counts the study's trials: a second invocation with the same n_trials finds it complete
    and runs nothing, one with a larger n_trials adds the difference."""
    optuna = pytest.importorskip("optuna")
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    for i, n_trials in enumerate([1, 1, 2]):
        args = [
            "-m",
            "hparams_search=cycles_optuna_sqlite",
            f"hydra.sweeper.storage={storage}",
            f"hydra.sweeper.n_trials={n_trials}",
        ]
        proc = run_cli([*args, *FAST, f"hydra.sweep.dir={tmp_path / f'sweep{i}'}"], tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert f"Optuna study 'cycles-gine': {n_trials} trials ({n_trials} complete, 0 pruned, 0 fail)" in proc.stdout
    ran = sorted(p.parent.relative_to(tmp_path).as_posix() for p in tmp_path.glob("sweep*/*/results.json"))
    assert ran == ["sweep0/0", "sweep2/1"]  # each trial's run directory is <sweep dir>/<trial number>
    study = optuna.load_study(study_name="cycles-gine", storage=storage)
    assert [t.state.name for t in study.trials] == ["COMPLETE", "COMPLETE"]
