"""The provenance of a run: the code (in a real git repository with two commits), the packages, the
machine, and the block's round trip through ``results.json``."""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import torch

import graphbench.run.provenance as provenance
from graphbench.run.provenance import (
    DISTRIBUTION,
    CodeVersion,
    Provenance,
    code_version,
    cpu_model,
    installed_version,
    untracked_sources,
)

EMPTY_DIFF_SHA256: str = hashlib.sha256(b"").hexdigest()


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository holding a package ``src/pkg`` at one commit (git looks no higher than ``tmp_path``)."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    root = tmp_path / "checkout"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "__init__.py").write_text("x = 1\n")
    git(root, "init", "-q")
    git(root, "add", "src/pkg/__init__.py")
    git(root, "commit", "-q", "-m", "first")
    return root


def test_commit_dirty_flag_and_diff_hash_follow_the_checkout(repo: Path) -> None:
    package = repo / "src" / "pkg"
    clean = code_version(package)
    assert (clean.commit, clean.dirty, clean.diff_sha256, clean.untracked, clean.reason) == (
        git(repo, "rev-parse", "HEAD"),
        False,
        EMPTY_DIFF_SHA256,
        0,
        None,
    )
    assert clean.version == installed_version(DISTRIBUTION)  # the version of the distribution named

    (package / "__init__.py").write_text("x = 2\n")
    edited = code_version(package)
    diff = subprocess.run(["git", "diff", "HEAD", "--binary"], cwd=repo, check=True, capture_output=True).stdout
    assert (edited.commit, edited.dirty, edited.diff_sha256) == (clean.commit, True, hashlib.sha256(diff).hexdigest())
    (package / "__init__.py").write_text("x = 3\n")
    assert code_version(package).diff_sha256 != edited.diff_sha256  # another edit of the same commit

    (package / "new.py").write_text("")
    assert code_version(package).untracked == 1  # untracked files are in no diff: counted
    git(repo, "add", "src/pkg")
    git(repo, "commit", "-q", "-m", "second")
    second = code_version(package)
    assert second.commit == git(repo, "rev-parse", "HEAD") != clean.commit
    assert (second.dirty, second.diff_sha256, second.untracked) == (False, EMPTY_DIFF_SHA256, 0)
    assert second.short == second.commit[:12] and edited.short == f"{clean.commit[:12]}+dirty {edited.diff_sha256[:8]}"


def test_a_package_not_tracked_in_the_checkout_records_its_version_only(repo: Path) -> None:
    """A package installed into a virtual environment inside a checkout is not that checkout's code."""
    installed = repo / ".venv" / "site-packages" / "pkg"
    installed.mkdir(parents=True)
    (installed / "__init__.py").write_text("")
    code = code_version(installed)
    assert (code.commit, code.dirty, code.diff_sha256) == (None, None, None)
    assert code.version == installed_version(DISTRIBUTION) and code.reason is not None and "not tracked" in code.reason
    assert code.short == f"graphbench {code.version}"


def test_without_git_the_version_is_recorded_with_the_reason(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(repo / "no-bin"))
    code = code_version(repo / "src" / "pkg")
    assert code.commit is None and code.reason is not None and code.reason.startswith("git not available")


def test_a_git_that_hangs_is_given_up_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text("#!/bin/sh\nexec sleep 30\n")
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setattr(provenance, "GIT_TIMEOUT_S", 0.2)
    code = code_version(tmp_path)
    assert code.commit is None and code.reason == "git did not answer within 0.2 s"


def test_cpu_model_reads_the_first_model_name(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: X\nmodel name\t: Some CPU @ 2.0GHz\n\nprocessor\t: 1\nmodel name\t: Other\n")
    assert cpu_model(cpuinfo) == "Some CPU @ 2.0GHz"
    assert cpu_model(tmp_path / "missing") == (platform.processor() or None)


def test_packages_and_machine_are_those_of_this_process() -> None:
    packages = provenance.package_versions()
    assert list(packages) == ["python", "torch", "cuda", "cudnn", "torch_geometric", "lightning", "hydra", "torchmetrics", "ogb"]
    assert packages["python"] == platform.python_version() and packages["torch"] == torch.__version__
    assert packages["cuda"] == torch.version.cuda
    machine = provenance.machine_info()
    assert machine["cpu_count"] == os.cpu_count() and machine["gpu_count"] == len(machine["gpus"])
    assert machine["gpu_count"] == (torch.cuda.device_count() if torch.cuda.is_available() else 0)


def test_collect_records_the_overrides_and_a_utc_start() -> None:
    before = datetime.now().astimezone()
    block = provenance.collect(["model=gcn", "seed=1"])
    started = datetime.fromisoformat(block.started_at or "")
    assert block.overrides == ["model=gcn", "seed=1"] and block.raw_files == {} and block.ended_at is None
    assert started.utcoffset() == timedelta(0) and before - timedelta(seconds=1) <= started <= datetime.now().astimezone()


def test_the_block_round_trips_and_tolerates_other_versions() -> None:
    block = Provenance(
        code=CodeVersion(version="0.1.0", commit="a" * 40, dirty=False, diff_sha256=EMPTY_DIFF_SHA256, untracked=0),
        packages={"torch": "2.5.1"},
        machine={"cpu": "X", "cpu_count": 4, "gpu_count": 0, "gpus": []},
        raw_files={"mutag/MUTAG_A.txt": "0" * 32},
        overrides=["model=gcn"],
        started_at="2026-01-01T00:00:00.000+00:00",
        ended_at="2026-01-01T00:01:00.000+00:00",
    )
    assert Provenance.from_dict(block.to_dict()) == block
    assert Provenance.from_dict({"code": {"commit": "b", "future": 1}, "future": 2}) == Provenance(code=CodeVersion(commit="b"))
    assert Provenance.from_dict(None) is None and Provenance.from_dict("text") is None


def test_untracked_counts_source_files_outside_run_directories(repo: Path) -> None:
    package = repo / "src" / "pkg"
    run = repo / "runs" / "mem"
    (run / ".hydra").mkdir(parents=True)
    (run / ".hydra" / "config.yaml").write_text("seed: 0\n")
    (run / "results.json").write_text("{}")
    (run / "run.log").write_text("")
    (repo / "multirun" / "sweep" / "0" / ".hydra").mkdir(parents=True)
    (repo / "multirun" / "sweep" / "0" / ".hydra" / "overrides.yaml").write_text("[]\n")
    (repo / "multirun" / "sweep" / "multirun.yaml").write_text("{}\n")
    (repo / "multirun" / "sweep" / "0" / "results.json").write_text("{}")
    assert code_version(package).untracked == 0  # run outputs are no code, whatever their names
    (repo / "notes.txt").write_text("")
    (package / "new.py").write_text("")
    (repo / "runs" / "custom.yaml").write_text("a: 1\n")  # beside the runs, not inside one
    assert code_version(package).untracked == 2


def test_untracked_sources_of_a_path_list() -> None:
    paths = ["a.py", "runs/x/.hydra/config.yaml", "runs/x/sub/y.py", "runs/x/results.json", "conf/new.yaml", "data/x.csv"]
    assert untracked_sources(paths) == 2
