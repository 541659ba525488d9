"""A non-editable install runs anywhere: the wheel holds the configs (``graphbench.conf``) and the
console scripts, and works from an empty directory with no checkout in sight.

The wheel is built from a copy of the files the build reads (so the checkout gets no ``build/``),
installed with ``--no-deps`` into a fresh venv outside the checkout whose only view of the
dependencies is a ``.pth`` line naming this interpreter's site-packages (a path, not a site dir: the
editable install's finder there is not loaded), and run with the checkout off ``sys.path`` (cwd an
empty directory, no ``PYTHONPATH``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.paths import REPO

#: what ``pip wheel`` reads from the checkout
BUILD_INPUTS = ("pyproject.toml", "setup.py", "README.md", "src", "conf")
#: a private dataset in a user's config folder: the cycles task, smaller
PRIVATE_DATASET = "defaults:\n  - cycles\n  - _self_\nname: my-cycles\nnum_train: 48\n"


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` in ``cwd`` with W&B offline and neither a data root nor ``PYTHONPATH`` inherited;
    fails the test with its output when it exits non-zero."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GRAPHBENCH_DATA", "GRAPHBENCH_CACHE")}
    env.update(WANDB_MODE="offline", HYDRA_FULL_ERROR="0")
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{command} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def venv_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin/`` of a fresh venv with graphbench installed from its wheel."""
    root = tmp_path_factory.mktemp("install")
    source = root / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    source.mkdir()
    for name in BUILD_INPUTS:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=ignore)
        else:
            shutil.copy2(path, source / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    run([*pip, "wheel", "--no-deps", "--no-build-isolation", str(source), "-w", str(root / "wheels")], cwd=root)
    (wheel,) = (root / "wheels").glob("graphbench-*.whl")
    run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], cwd=root)
    python = root / "venv" / "bin" / "python"
    purelib = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=root).stdout.strip())
    (purelib / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    # --force-reinstall: pip sees the editable graphbench's metadata on the dependencies' path
    run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--force-reinstall", str(wheel)], cwd=root)
    return python.parent


@pytest.fixture(scope="module")
def empty_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("anywhere")


def test_the_installed_package_and_its_configs_are_the_wheels(venv_bin: Path, empty_dir: Path) -> None:
    code = "import graphbench, graphbench.conf; print(graphbench.__file__); print(graphbench.conf.CONFIG_DIR)"
    package, configs = run([str(venv_bin / "python"), "-c", code], cwd=empty_dir).stdout.split()
    venv = venv_bin.parent
    assert Path(package).is_relative_to(venv) and not Path(package).is_relative_to(REPO)
    assert Path(configs).is_relative_to(venv)
    assert {p.relative_to(configs).as_posix() for p in Path(configs).rglob("*.yaml")} == {
        p.relative_to(REPO / "conf").as_posix() for p in (REPO / "conf").rglob("*.yaml")
    }


def test_graphbench_runs_from_an_empty_directory_and_reports(venv_bin: Path, empty_dir: Path) -> None:
    run([str(venv_bin / "graphbench"), "++trainer.fast_dev_run=true"], cwd=empty_dir)
    (results,) = (empty_dir / "outputs").glob("*/*/results.json")
    record = json.loads(results.read_text())
    assert record["status"] == "completed"
    assert record["config"]["dataset"]["name"] == "cycles"
    assert (results.parent / "run.log").is_file()  # hydra.job.name=run, as with python run.py
    assert (empty_dir / "cache").is_dir()  # paths.cache_dir: ./cache of the working directory
    code = record["provenance"]["code"]  # the wheel's code, not a checkout's
    assert code["version"] == "0.1.0" and code["commit"] is None and code["reason"]
    report = run([str(venv_bin / "graphbench-report"), str(results.parent)], cwd=empty_dir).stdout
    assert "## dataset=cycles, test/accuracy" in report
    assert "| (all runs) |" in report


def test_a_user_config_dir_adds_a_private_dataset(venv_bin: Path, empty_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "dataset").mkdir()
    (tmp_path / "dataset" / "my-cycles.yaml").write_text(PRIVATE_DATASET)
    command = [str(venv_bin / "graphbench"), "--config-dir", str(tmp_path), "dataset=my-cycles", "--cfg", "job"]
    composed = run(command, cwd=empty_dir).stdout
    assert "name: my-cycles" in composed and "num_train: 48" in composed
    assert "num_val: 250" in composed  # the rest from the shipped dataset/cycles.yaml


def test_the_other_console_scripts_use_the_shipped_configs(venv_bin: Path, empty_dir: Path) -> None:
    sweep = run([str(venv_bin / "graphbench-sweep"), "wandb", "model=gcn,gine"], cwd=empty_dir).stdout
    assert "values:\n    - gcn\n    - gine" in sweep and "val/accuracy" in sweep  # cycles' monitored metric
    script = (venv_bin / "graphbench-analysis").read_text()
    assert "from graphbench.analysis.__main__ import main" in script
