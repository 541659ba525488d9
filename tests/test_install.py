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
import zipfile
from email.parser import Parser
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from graphbench.run.provenance import DISTRIBUTION
from tests.paths import REPO
from tests.test_readme import bash_blocks

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
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """graphbench's wheel, built from a copy of the checkout's build inputs."""
    root = tmp_path_factory.mktemp("wheel")
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
    (built,) = (root / "wheels").glob("graphbench_gnn-*.whl")  # the distribution graphbench-gnn
    return built


@pytest.fixture(scope="module")
def venv_bin(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    """The ``bin/`` of a fresh venv with graphbench installed from its wheel."""
    root = tmp_path_factory.mktemp("install")
    run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], cwd=root)
    python = root / "venv" / "bin" / "python"
    purelib = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=root).stdout.strip())
    (purelib / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    # --force-reinstall: pip sees the editable graphbench's metadata on the dependencies' path
    run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--force-reinstall", str(wheel)], cwd=root)
    return python.parent


def declared_distributions(requirements: list[str]) -> dict[str, metadata.Distribution]:
    """The installed distributions that ``requirements`` need, with their own requirements, by name:
    what ``pip install`` of a package declaring ``requirements`` would install (no extras of its own)."""
    found: dict[str, metadata.Distribution] = {}
    pending = [(Requirement(text), "") for text in requirements]
    while pending:
        requirement, extra = pending.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        distribution = metadata.distribution(requirement.name)
        found[name] = distribution
        for wanted in ["", *sorted(requirement.extras)]:
            pending.extend((Requirement(text), wanted) for text in distribution.requires or [])
    return found


def link_distributions(distributions: dict[str, metadata.Distribution], site: Path) -> None:
    """Symbolic links in ``site`` to the installed files of ``distributions``: a whole top-level entry
    where one distribution owns it, file by file in a top-level folder several share (a namespace
    package such as ``hydra_plugins``)."""
    owners: dict[str, set[str]] = {}
    files: list[tuple[str, Path, Path]] = []
    for name, distribution in distributions.items():
        for entry in distribution.files or []:
            if entry.parts[0] == "..":
                continue
            owners.setdefault(entry.parts[0], set()).add(name)
            files.append((name, Path(*entry.parts), Path(str(distribution.locate_file(entry)))))
    for name, relative, source in files:
        top = relative.parts[0]
        target = site / (top if len(owners[top]) == 1 else relative)
        if target.exists() or target.is_symlink() or not source.exists():
            continue
        if len(owners[top]) == 1:
            source = Path(str(distributions[name].locate_file(top)))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(source)


def wheel_requirements(wheel: Path) -> list[str]:
    """The wheel's ``Requires-Dist`` lines: what ``pip install`` resolves (extras behind their markers)."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return Parser().parsestr(archive.read(name).decode()).get_all("Requires-Dist") or []


def test_the_install_takes_optuna_4_and_sqlalchemy_2_and_ships_the_sweeper_plugin(wheel: Path) -> None:
    """What ``pip install -e '.[test]'`` resolves here: Optuna >= 4 and SQLAlchemy 2, with nothing in the
    dependencies (the test extra's included) that excludes SQLAlchemy 2; no hydra-optuna-sweeper (which
    pins optuna < 3); graphbench's sweeper in the wheel's ``hydra_plugins`` namespace."""
    requirements = wheel_requirements(wheel)
    closure = declared_distributions([*[r for r in requirements if "extra ==" not in r], "graphbench-gnn[test]"])
    assert Version(closure["optuna"].version) >= Version("4") and Version(closure["sqlalchemy"].version) >= Version("2")
    assert "hydra-optuna-sweeper" not in closure and "psycopg" in closure
    for distribution in closure.values():
        for text in distribution.requires or []:
            requirement = Requirement(text)
            if canonicalize_name(requirement.name) == "sqlalchemy":
                assert requirement.specifier.contains(closure["sqlalchemy"].version), f"{distribution.metadata['Name']}: {text}"
    with zipfile.ZipFile(wheel) as archive:
        assert "hydra_plugins/graphbench_optuna_sweeper/optuna_sweeper.py" in archive.namelist()
        assert not any(n.startswith("hydra_plugins/__init__") for n in archive.namelist())  # a namespace, shared


@pytest.fixture(scope="module")
def declared_venv_bin(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    """The ``bin/`` of a fresh venv that holds graphbench's wheel and only the distributions its metadata
    declares (linked from this interpreter's), as the README's ``pip install -e .`` gives."""
    declared = wheel_requirements(wheel)
    root = tmp_path_factory.mktemp("declared")
    run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], cwd=root)
    python = root / "venv" / "bin" / "python"
    purelib = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=root).stdout.strip())
    link_distributions(declared_distributions(declared), purelib)
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index"]
    run([*pip, str(wheel)], cwd=root)
    return python.parent


def readme_block(marker: str) -> tuple[list[str], list[str]]:
    """The commands of the README's ``bash`` block that contains ``marker``, and its ``append`` entries."""
    (block,) = [b for b in bash_blocks(REPO / "README.md") if any(marker in c for c in b.commands)]
    return block.commands, [part.strip() for part in block.directive.get("append", "").split("|")]


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


def test_the_distribution_is_graphbench_gnn_and_version_says_where_its_module_is(
    venv_bin: Path, empty_dir: Path, wheel: Path
) -> None:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        fields = Parser().parsestr(archive.read(name).decode())
    assert (fields["Name"], fields["Version"]) == (DISTRIBUTION, "0.1.0")
    code = "import graphbench; print(graphbench.__file__)"
    package = Path(run([str(venv_bin / "python"), "-c", code], cwd=empty_dir).stdout.strip()).parent
    assert (
        run([str(venv_bin / "graphbench"), "--version"], cwd=empty_dir).stdout
        == f"graphbench-gnn 0.1.0: graphbench from {package}\n"
    )


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
    assert "| (all runs) [fast_dev_run] |" in report  # a smoke test, marked as such


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
    tables = run([str(venv_bin / "graphbench-reproduce"), "--list"], cwd=empty_dir).stdout
    assert "kipf-welling-2017: Kipf & Welling 2017" in tables  # conf/reproduce/ ships in graphbench.conf
    for name in ("graphbench-report", "graphbench-analysis", "graphbench-sweep"):
        assert run([str(venv_bin / name), "--help"], cwd=empty_dir).stdout.startswith(f"usage: {name} "), name


@pytest.mark.slow
def test_the_readme_cluster_commands_run_with_the_declared_dependencies_only(declared_venv_bin: Path, tmp_path: Path) -> None:
    """The README's submitit_local and Optuna blocks (on their fast settings) and a joblib multirun, run
    by the installed ``graphbench`` in a venv of the wheel's declared dependencies."""
    graphbench = str(declared_venv_bin / "graphbench")
    cheap = (
        "dataset.num_train=48 dataset.num_val=16 dataset.num_test=16 dataset.batch_size=16 model.hidden_dim=8 model.num_layers=1"
    )
    outputs = []
    for marker in ("hydra/launcher=submitit_local", "hparams_search=cycles_optuna"):
        commands, appends = readme_block(marker)
        for index, command in enumerate(commands):
            args = command.split("#")[0].split()
            assert args[:2] == ["python", "run.py"], command
            append = appends[index] if len(appends) > 1 else appends[0]
            args = [a.replace("multirun/", f"{tmp_path}/") for a in args[2:]]
            outputs.append(run([graphbench, *args, *append.split(), *cheap.split()], cwd=tmp_path).stdout)
    joblib = ["-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "model=gcn,gine", "trainer.max_epochs=1"]
    outputs.append(run([graphbench, *joblib, f"hydra.sweep.dir={tmp_path}/joblib", *cheap.split()], cwd=tmp_path).stdout)
    submitit, skipped, optuna, parallel = outputs
    assert "multirun: 2 of 2 jobs completed" in submitit
    assert "2 of them skipped as completed before (resume=auto)" in skipped
    assert "Best value" in optuna
    assert "multirun: 2 of 2 jobs completed" in parallel
    assert len(list((tmp_path / "joblib").glob("*/results.json"))) == 2


def test_the_declared_venv_holds_only_declared_distributions(declared_venv_bin: Path, empty_dir: Path) -> None:
    """The venv of the cluster test is what it claims: the test extra's packages are not in it."""
    python = str(declared_venv_bin / "python")
    code = "import importlib.util as u; print(u.find_spec('pytest') is None, u.find_spec('hydra_plugins.hydra_submitit_launcher') is not None)"
    assert run([python, "-c", code], cwd=empty_dir).stdout.split() == ["True", "True"]
