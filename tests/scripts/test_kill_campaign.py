"""scripts/kill_campaign.py and scripts/killed_run.py: what a write event names, how cases are counted in
the table, and a few fixed cases of the campaign run for real (slow)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.e2e.test_cli import cli_env
from tests.paths import REPO


def script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # where its dataclasses find their module
    spec.loader.exec_module(module)
    return module


def test_writes_are_counted_under_the_file_they_make() -> None:
    killed_run = script("killed_run")
    assert killed_run.file_kind("/r/results.json") == "results.json"
    assert killed_run.file_kind("/r/.results.json.123.tmp") == "results.json"
    assert killed_run.file_kind("/r/checkpoints/best-v1.ckpt") == "best.ckpt"
    assert killed_run.file_kind("/r/csv/.metrics.csv.77.tmp") == "metrics.csv"
    assert killed_run.file_kind("/cache/cycles-02f5.pt") == "cache"
    assert killed_run.file_kind("/r/csv/metrics.csv.resuming") is None
    assert killed_run.file_kind("/r/run.log") is None


def test_instrument_signals_once_at_its_event(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    killed_run = script("killed_run")
    sent = []
    monkeypatch.setattr(killed_run.os, "kill", lambda pid, signum: sent.append(signum))
    instrument = killed_run.Instrument(tmp_path / "events.txt", "metrics.csv#2:after", killed_run.signal.SIGTERM)
    write = instrument.writer(lambda path: None, lambda path: path)
    for _ in range(3):
        write("/r/csv/metrics.csv")
    assert (tmp_path / "events.txt").read_text().split() == [
        f"metrics.csv#{n}:{m}" for n in (1, 2, 3) for m in ("before", "after")
    ]
    assert sent == [killed_run.signal.SIGTERM]


def test_table_counts_kills_by_moment_and_signal() -> None:
    campaign = script("kill_campaign")
    cases = [
        campaign.Case("results.json#1:after", "SIGKILL"),
        campaign.Case("results.json#3:before", "SIGINT"),
        campaign.Case("last.ckpt#2:rename", "SIGKILL", problems=["metrics.csv: 11 rows"]),
        campaign.Case("last.ckpt#5:rename", "SIGKILL"),
        campaign.Case("random", "SIGTERM", second_kill=True),
    ]
    assert campaign.table(cases).splitlines()[2:] == [
        "| results.json (claim), after | 1 | — | — | 1 of 1 |",
        "| results.json (end), before | — | — | 1 | 1 of 1 |",
        "| last.ckpt, rename | 2 | — | — | 1 of 2 |",
        "| random moment, relaunch killed again | — | 1 | — | 1 of 1 |",
        "| **all** | 3 | 1 | 1 | **4 of 5** |",
    ]


@pytest.mark.slow
def test_fixed_kills_resume_exactly(tmp_path: Path) -> None:
    """Killed while testing, right after the claim, at a checkpoint's rename, at a metrics.csv write with
    SIGTERM, at the end's record with SIGINT, and at random moments with a second kill."""
    cases = "predictions.npz#1:before:SIGKILL,results.json#1:after:SIGKILL,last.ckpt#3:rename:SIGKILL,"
    cases += "metrics.csv#4:before:SIGTERM,results.json#3:before:SIGINT,random:SIGKILL+,random:SIGINT+"
    env = {**cli_env(), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "scripts/kill_campaign.py", "--cases", cases, "--work-dir", str(tmp_path)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "| **all** | 4 | 1 | 2 | **7 of 7** |" in done.stdout
