"""Run directories through the real CLI: runs started at once get one directory each; a directory that
records another run is refused; every unusable path a user can give ends in one line, rc 1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FAST_CYCLES
from tests.e2e.test_cli import cli_env, run_cli
from tests.paths import REPO

#: the shortest real run: one epoch of cycles
ONE_EPOCH = [*FAST_CYCLES, "trainer.max_epochs=1"]


@pytest.mark.slow
def test_runs_started_at_once_get_a_directory_each_and_all_complete(tmp_path: Path) -> None:
    """A shell loop (``for s in ...; do python run.py ... seed=$s & done; wait``), with 4 runs,
    in a working directory of their own so that the default ``outputs/<date>/<time>`` names are used."""
    procs = [
        subprocess.Popen(
            [sys.executable, str(REPO / "run.py"), *ONE_EPOCH, f"seed={seed}", f"paths.cache_dir={tmp_path / 'cache'}"],
            cwd=tmp_path,
            env=cli_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in range(4)
    ]
    outcomes = [(proc.wait(timeout=600), proc.stderr.read() if proc.stderr else "") for proc in procs]
    assert [code for code, _ in outcomes] == [0] * 4, outcomes
    records = sorted((tmp_path / "outputs").glob("*/*/results.json"))
    assert len(records) == 4
    assert sorted(json.loads(r.read_text())["config"]["seed"] for r in records) == [0, 1, 2, 3]
    assert {json.loads(r.read_text())["status"] for r in records} == {"completed"}

    # a run told to write into the directory of one of them is refused, and leaves it as it was
    taken, before = records[0].parent, records[0].read_text()
    proc = run_cli([*ONE_EPOCH, "seed=9", f"hydra.run.dir={taken}"], tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"error: {taken} already holds another run (results.json: completed); start this one in a new directory "
        "(leave hydra.run.dir / hydra.sweep.dir unset, or name an unused one), or continue that run with resume=auto and its config"
    ]
    assert records[0].read_text() == before


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("hydra.run.dir={file}/run", "error: hydra.run.dir={file}/run cannot be used: Not a directory"),
        (
            "hydra.run.dir=/proc/graphbench-run",
            "error: hydra.run.dir=/proc/graphbench-run cannot be used: No such file or directory",
        ),
        ("-m hydra.sweep.dir={file}/sweep", "error: hydra.sweep.dir={file}/sweep cannot be used: Not a directory"),
        ("paths.cache_dir={file}/cache", "error: paths.cache_dir={file}/cache cannot be used: Not a directory"),
        (
            "paths.data_dir={file}",
            "error: paths.data_dir={file} is a file: set paths.data_dir=<the folder holding the raw datasets>",
        ),
    ],
    ids=["run-dir-under-a-file", "run-dir-read-only", "sweep-dir", "cache-dir", "data-dir"],
)
def test_an_unusable_path_fails_in_one_line(tmp_path: Path, override: str, expected: str) -> None:
    file = tmp_path / "file"
    file.write_text("not a directory")
    args = override.format(file=file).split()
    run_dir = [] if any(a.startswith(("hydra.", "-m")) for a in args) else [f"hydra.run.dir={tmp_path / 'run'}"]
    proc = run_cli([*args, *ONE_EPOCH, *run_dir], tmp_path)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(expected.format(file=file)), proc.stderr[-2000:]
    assert not (tmp_path / "run").exists()  # refused before anything was written
