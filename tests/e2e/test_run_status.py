"""Every way a run can end, through the real CLI: its ``status`` in ``results.json``, its exit code and
what it prints."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from graphbench.callbacks.record_progress import epoch_metrics
from tests.conftest import FAST_CYCLES, real_data_root
from tests.e2e.test_cli import cli_env, run_cli
from tests.paths import REPO


def strict_json(path: Path) -> dict:
    """``results.json`` parsed by a reader that refuses the non-JSON tokens NaN and Infinity."""

    def refuse(token: str) -> None:
        raise ValueError(f"{path} holds the non-JSON token {token}")

    return json.loads(path.read_text(), parse_constant=refuse)


def start_and_signal(tmp_path: Path, signum: int) -> tuple[int, str, dict]:
    """Start a long run, send ``signum`` once its second epoch has been printed, wait for it to end."""
    run_dir = tmp_path / "run"
    args = [*FAST_CYCLES, "trainer.max_epochs=500", f"hydra.run.dir={run_dir}", f"paths.cache_dir={tmp_path / 'cache'}"]
    proc = subprocess.Popen(
        [sys.executable, "run.py", *args], cwd=REPO, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 300
    for line in proc.stdout:
        if line.startswith("epoch 1/") or time.monotonic() > deadline:
            break
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=300)
    return proc.returncode, stderr, strict_json(run_dir / "results.json")


def test_sigterm_during_training_ends_preempted_with_exit_code_143(tmp_path: Path) -> None:
    code, stderr, results = start_and_signal(tmp_path, signal.SIGTERM)
    assert results["status"] == "preempted"
    assert code == 143
    run_dir = tmp_path / "run"
    resume = f"to continue it, run the same command with resume=auto hydra.run.dir={run_dir}"
    assert f"preempted (SIGTERM); run directory: {run_dir}; {resume}" in stderr and "Traceback" not in stderr
    assert not any(line.startswith("error:") for line in stderr.splitlines())  # a signal is not an error


def test_ctrl_c_during_training_ends_interrupted_with_exit_code_130(tmp_path: Path) -> None:
    code, stderr, results = start_and_signal(tmp_path, signal.SIGINT)
    assert results["status"] == "interrupted"
    assert code == 130
    run_dir = tmp_path / "run"
    resume = f"to continue it, run the same command with resume=auto hydra.run.dir={run_dir}"
    assert f"interrupted (Ctrl-C); run directory: {run_dir}; {resume}" in stderr and "Traceback" not in stderr
    assert not any(line.startswith("error:") for line in stderr.splitlines())


def test_divergence_ends_diverged_with_strict_json(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = run_cli([*FAST_CYCLES, "optimizer.lr=1e10", f"hydra.run.dir={run_dir}"], tmp_path)
    assert proc.returncode == 1
    results = strict_json(run_dir / "results.json")
    assert results["status"] == "diverged at epoch 0"
    assert f"error: diverged at epoch 0 (run directory: {run_dir})" in proc.stderr


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("model.hidden_dim=-5", "model.hidden_dim=-5 must be a positive integer"),
        ("trainer.max_epochs=0", "trainer.max_epochs=0 must be an integer >= 1 (or -1: no limit)"),
    ],
)
def test_bad_value_fails_in_one_line_and_is_recorded(tmp_path: Path, override: str, expected: str) -> None:
    run_dir = tmp_path / "run"
    proc = run_cli([*FAST_CYCLES, override, f"hydra.run.dir={run_dir}"], tmp_path)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and expected in errors[0]
    assert strict_json(run_dir / "results.json")["status"] == f"failed: invalid config: {expected}"
    assert errors[0] == f"error: invalid config: {expected} (run directory: {run_dir})"  # not "error: failed: ..."


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks a machine without a CUDA GPU")
def test_trainer_gpu_without_a_gpu_names_the_cpu_trainer_before_building_anything(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = run_cli([*FAST_CYCLES, "trainer=gpu", f"hydra.run.dir={run_dir}"], tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "trainer.accelerator=gpu needs a CUDA GPU" in errors[0] and "trainer=cpu" in errors[0]
    assert "processed cycles" not in proc.stdout + proc.stderr  # refused before the data is built
    assert strict_json(run_dir / "results.json")["status"].startswith("failed: invalid config: trainer.accelerator=gpu")


def test_multirun_runs_every_job_and_lists_the_ones_that_failed(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    proc = run_cli(["-m", *FAST_CYCLES, "trainer.max_epochs=1", "model.hidden_dim=-5,16", f"hydra.sweep.dir={sweep}"], tmp_path)
    assert proc.returncode == 1
    assert strict_json(sweep / "0" / "results.json")["status"].startswith("failed: invalid config: model.hidden_dim=-5")
    assert strict_json(sweep / "1" / "results.json")["status"] == "completed"
    assert f"multirun: 1 of 2 jobs completed ({sweep})" in proc.stdout
    assert "not completed: 0 [" in proc.stderr and "model.hidden_dim=-5" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.real_data
def test_multirun_with_a_bad_split_index_fails_that_job_only(tmp_path: Path) -> None:
    """A multirun over split 99 of Texas, which does not exist, and split 0, which does."""
    sweep = tmp_path / "sweep"
    proc = run_cli(
        [
            "-m",
            "dataset=texas",
            "dataset.split_index=99,0",
            f"paths.data_dir={real_data_root()}",
            "trainer.max_epochs=2",
            f"hydra.sweep.dir={sweep}",
        ],
        tmp_path,
    )
    assert proc.returncode == 1
    first = strict_json(sweep / "0" / "results.json")["status"]
    assert first.startswith("failed: dataset.split_index=99 is out of range for texas")
    assert strict_json(sweep / "1" / "results.json")["status"] == "completed"


def test_fast_dev_run_completes_with_results(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = run_cli(["++trainer.fast_dev_run=true", f"hydra.run.dir={run_dir}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = strict_json(run_dir / "results.json")
    assert results["status"] == "completed"
    assert results["epochs_trained"] == 1 and results["best_epoch"] == 0
    assert {"val/accuracy", "test/accuracy"} <= set(results["metrics"])
    assert (run_dir / "predictions.npz").exists()


def test_console_output_says_each_thing_once(tmp_path: Path) -> None:
    """One line per epoch off a terminal, no repeated message, no advertisement or internal
    deprecation warning, and the summary names the run directory."""
    run_dir = tmp_path / "run"
    proc = run_cli([*FAST_CYCLES, "trainer.enable_progress_bar=auto", f"hydra.run.dir={run_dir}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout.splitlines()
    assert [line.split("  ")[0] for line in out if line.startswith("epoch ")] == ["epoch 0/2", "epoch 1/2"]
    assert len(out) == len(set(out)), "a line was printed twice"
    everything = proc.stdout + proc.stderr
    for unwanted in ("litlogger", "LeafSpec", "INFO:", "it/s]", "logging interval"):
        assert unwanted not in everything, unwanted
    assert out[-1] == f"run directory: {run_dir}"
    assert out[0] == "recipe: graphbench default, no published setting"  # the card, once, first
    assert len(out) <= 21


def test_ctrl_c_after_three_epochs_records_them_and_the_best_validation_metric(tmp_path: Path) -> None:
    """SIGINT once the third epoch's line is printed: ``results.json`` says ``interrupted`` and holds the
    epochs trained, the best epoch so far with its train and validation metrics, and the history;
    no test metric, since the test never ran. Epochs of 12 batches leave the signal time to land
    during the fourth epoch; whatever the timing, the record matches the epoch lines printed."""
    run_dir = tmp_path / "run"
    args = [
        *FAST_CYCLES,
        "dataset.batch_size=8",
        "trainer.max_epochs=500",
        f"hydra.run.dir={run_dir}",
        f"paths.cache_dir={tmp_path / 'cache'}",
    ]
    proc = subprocess.Popen(
        [sys.executable, "run.py", *args], cwd=REPO, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    printed = []
    for line in proc.stdout:
        printed.append(line)
        if line.startswith("epoch 2/"):
            break
    proc.send_signal(signal.SIGINT)
    rest, stderr = proc.communicate(timeout=300)
    epoch_lines = [line for line in [*printed, *rest.splitlines()] if line.startswith("epoch ")]
    results = strict_json(run_dir / "results.json")
    assert proc.returncode == 130 and "Traceback" not in stderr
    assert results["status"] == "interrupted"
    assert results["epochs_trained"] == len(epoch_lines) >= 3
    assert [entry["epoch"] for entry in results["history"]] == list(range(len(epoch_lines)))
    monitored = [entry["val/accuracy"] for entry in results["history"]]
    assert results["metrics"]["val/accuracy"] == max(monitored)
    best = results["history"][results["best_epoch"]]
    assert results["metrics"] == epoch_metrics(best)
    assert "train/loss" in results["metrics"] and not any(k.startswith("test/") for k in results["metrics"])


#: ``python -c`` code: ``python run.py <args>`` that sends itself a signal at a point of its start-up, and
#: writes the time it did so: ``<signal number> <when> <stamp file> <entry> <args>``, ``entry`` ``run.py`` or
#: ``graphbench`` (the console script's entry point, graphbench.__main__.main); ``when`` is ``import`` (as
#: torch_geometric starts to be imported) or ``composed`` (Hydra has composed the config and calls
#: graphbench's run-directory check, before the run starts)
SIGNAL_AT_START_UP = """
import importlib.abc, os, runpy, sys, time
signum, when, stamp = int(sys.argv[1]), sys.argv[2], sys.argv[3]

def fire():
    with open(stamp, "w") as handle:
        handle.write(repr(time.time()))
    os.kill(os.getpid(), signum)

class AtImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "torch_geometric":
            fire()
        return None

if when == "import":
    sys.meta_path.insert(0, AtImport())
else:
    from graphbench.run.run_dir import RunDirGuard
    check = RunDirGuard.on_run_start
    def on_run_start(self, config, **kwargs):
        fire()
        return check(self, config, **kwargs)
    RunDirGuard.on_run_start = on_run_start
if sys.argv[4] == "run.py":
    sys.argv = ["run.py", *sys.argv[5:]]
    runpy.run_path("run.py", run_name="__main__")
else:  # what the installed graphbench command runs
    sys.argv = ["graphbench", *sys.argv[5:]]
    from graphbench.__main__ import main
    main()
"""


@pytest.mark.parametrize("entry", ["run.py", "graphbench"])
@pytest.mark.parametrize("when", ["import", "composed"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_start_up_ends_the_run_at_once_without_a_traceback(
    tmp_path: Path, signum: int, when: str, entry: str
) -> None:
    run_dir, stamp = tmp_path / "run", tmp_path / "signalled-at"
    args = [*FAST_CYCLES, f"hydra.run.dir={run_dir}", f"paths.cache_dir={tmp_path / 'cache'}"]
    proc = subprocess.run(
        [sys.executable, "-c", SIGNAL_AT_START_UP, str(int(signum)), when, str(stamp), entry, *args],
        cwd=REPO,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    ended = time.time()
    assert proc.returncode == -signum, proc.stderr[-2000:]  # ended by the signal, as a shell shows it (130, 143)
    assert ended - float(stamp.read_text()) < 1.0
    assert "Traceback" not in proc.stderr and proc.stderr.strip() == ""
    assert not (run_dir / "results.json").exists()  # nothing recorded: the run had not started
