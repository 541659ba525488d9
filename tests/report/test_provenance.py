"""The report's provenance line and its warning for a row whose runs came from two commits or
package sets; the two commits come from the collector run in a real git repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from graphbench.report.__main__ import main
from graphbench.report.collect import collect
from graphbench.report.provenance import machine_of, mixed_warnings, provenance_line
from graphbench.run.provenance import CodeVersion, Provenance, code_version
from graphbench.run.record import RESULTS_FILENAME, RunRecord
from tests.report._runs import run_config

PACKAGES = {"python": "3.11.7", "torch": "2.5.1", "cuda": "12.4", "torch_geometric": "2.6.1", "lightning": "2.4.0"}
MACHINE = {"cpu": "AMD EPYC 9654", "cpu_count": 192, "gpu_count": 2, "gpus": ["NVIDIA H200", "NVIDIA H200"]}


def provenance(commit: str, **packages: str) -> Provenance:
    code = CodeVersion(version="0.1.0", commit=commit, dirty=False, diff_sha256="0" * 64)
    return Provenance(code=code, packages={**PACKAGES, **packages}, machine=MACHINE)


def write(out: Path, model: str, seed: int, test: float, block: Provenance | None) -> None:
    out.mkdir(parents=True)
    RunRecord(
        status="completed",
        config=run_config(out, "mutag", model, seed, None),
        replicate_keys=["seed", "run_name"],
        metric="accuracy",
        higher_is_better=True,
        metrics={"test/accuracy": test, "val/accuracy": test},
        provenance=block,
    ).write(out / RESULTS_FILENAME)


def test_one_line_per_table_and_a_warning_naming_the_row_that_mixes_commits_and_torch(tmp_path: Path) -> None:
    a, b = "a" * 40, "b" * 40
    write(tmp_path / "0", "gcn", 0, 0.8, provenance(a))
    write(tmp_path / "1", "gcn", 1, 0.7, provenance(b))
    write(tmp_path / "2", "gcn", 2, 0.9, provenance(b))
    write(tmp_path / "3", "mlp", 0, 0.6, provenance(a))
    write(tmp_path / "4", "mlp", 1, 0.5, provenance(a, torch="2.6.0"))
    (block,) = collect([tmp_path]).blocks
    assert provenance_line(block) == (
        f"Provenance: code {a[:12]} (3 runs), {b[:12]} (2 runs); torch 2.5.1 (4 runs), 2.6.0 (1 run), PyG 2.6.1, "
        "Lightning 2.4.0; machine AMD EPYC 9654 (192 cores), 2 × NVIDIA H200."
    )
    assert mixed_warnings(block) == [
        f"Warning: row `model=gcn` mixes code {b[:12]} (2 runs), {a[:12]} (1 run): its runs are not from one code and package set.",
        "Warning: row `model=mlp` mixes torch 2.5.1 (1 run), 2.6.0 (1 run): its runs are not from one code and package set.",
    ]


def test_one_commit_gives_no_warning_and_old_records_are_counted(tmp_path: Path) -> None:
    write(tmp_path / "0", "gcn", 0, 0.8, provenance("a" * 40))
    write(tmp_path / "1", "gcn", 1, 0.7, provenance("a" * 40))
    write(tmp_path / "2", "gcn", 2, 0.7, None)  # a results.json of schema version 2
    (block,) = collect([tmp_path]).blocks
    assert mixed_warnings(block) == []
    assert provenance_line(block) == (
        f"Provenance: code {'a' * 12}; torch 2.5.1, PyG 2.6.1, Lightning 2.4.0; machine AMD EPYC 9654 (192 cores), "
        "2 × NVIDIA H200; 1 run without provenance (results.json before schema version 3)."
    )


def test_machine_without_gpu_or_cpu_name() -> None:
    assert machine_of(Provenance(machine={"cpu": None, "cpu_count": 2, "gpus": []})) == "unknown CPU (2 cores), no GPU"


def git(repo: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def test_the_report_warns_on_a_row_run_from_two_commits_of_a_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The collector itself, in a git repository committed twice between two seeds of one config."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    package = tmp_path / "checkout" / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("x = 1\n")
    git(package, "init", "-q")
    git(package, "add", "__init__.py")
    git(package, "commit", "-q", "-m", "first")
    first = Provenance(code=code_version(package), packages=PACKAGES, machine=MACHINE)
    (package / "__init__.py").write_text("x = 2\n")
    git(package, "commit", "-q", "-am", "second")
    second = Provenance(code=code_version(package), packages=PACKAGES, machine=MACHINE)
    assert first.code.commit is not None and second.code.commit is not None and first.code.commit != second.code.commit
    runs = tmp_path / "multirun"
    write(runs / "0", "gcn", 0, 0.8, first)
    write(runs / "1", "gcn", 1, 0.7, second)
    write(runs / "2", "mlp", 0, 0.6, second)
    write(runs / "3", "mlp", 1, 0.5, second)
    assert main([str(runs)]) == 0
    lines = capsys.readouterr().out.splitlines()
    one, two = first.code.commit[:12], second.code.commit[:12]
    assert lines[4].startswith(f"Provenance: code {two} (3 runs), {one} (1 run); torch 2.5.1, PyG 2.6.1, Lightning 2.4.0; ")
    warnings = [line for line in lines if line.startswith("Warning:")]
    assert warnings == [
        f"Warning: row `model=gcn` mixes code {one} (1 run), {two} (1 run): its runs are not from one code and package set."
    ]
    assert main([str(runs), "--csv"]) == 0
    assert capsys.readouterr().err.splitlines() == [f"{warnings[0]} [dataset=mutag, test/accuracy (higher is better)]"]
