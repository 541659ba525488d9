"""The memorization plots and the multirun table, on hand-written results.json files (the command line:
``tests/analysis/test_main.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphbench.analysis.memorization_plots import collect_runs, plot_histogram, plot_rate_vs_homophily, runs_table
from graphbench.run.record import RunRecord

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def write_run(run_dir: Path, homophily: float | None, rate: float, status: str = "completed", task: str = "memorization") -> None:
    dataset = {"name": "syn-cora" if homophily is not None else "cora"}
    if homophily is not None:
        dataset["homophily"] = homophily
    config = {"task": {"name": task}, "dataset": dataset, "model": {"name": "gcn"}, "seed": 0}
    metrics = {"memorization/rate": rate, "memorization/rate_control": 0.0, "test/accuracy_f": 0.5, "test/accuracy_g": 0.25}
    run_dir.mkdir(parents=True)
    RunRecord(status=status, config=config, metrics=metrics).write(run_dir / "results.json")


def test_collect_runs_keeps_completed_memorization_runs_sorted(tmp_path: Path) -> None:
    write_run(tmp_path / "2", 1.0, 0.01)
    write_run(tmp_path / "0", 0.0, 0.3)
    write_run(tmp_path / "1", None, 0.125)
    write_run(tmp_path / "3", 0.5, 0.9, status="failed: boom")
    write_run(tmp_path / "4", 0.5, 0.9, task="train")
    runs = collect_runs(tmp_path)
    assert [(r.dataset, r.homophily, r.rate) for r in runs] == [
        ("cora", None, 0.125),
        ("syn-cora", 0.0, 0.3),
        ("syn-cora", 1.0, 0.01),
    ]
    table = runs_table(runs)
    assert table.splitlines()[2] == "| cora |  | gcn | best |  | 0 | 12.5 | 0.0 | 50.0 | 25.0 |"
    assert runs_table(runs, csv_format=True).splitlines()[2] == "syn-cora,0,gcn,best,,0,30.0,0.0,50.0,25.0"
    out = plot_rate_vs_homophily(runs, tmp_path / "rate.png")
    assert out.read_bytes()[:8] == PNG_MAGIC
    with pytest.raises(ValueError, match=r"no completed memorization run with a dataset\.homophily"):
        plot_rate_vs_homophily(runs[:1], tmp_path / "none.png")


def test_histogram_is_a_png(tmp_path: Path) -> None:
    path = plot_histogram({"candidate": [0.9, 0.1, -0.2], "control": [0.0, 0.05], "shared": []}, 0.5, tmp_path / "h.png", "t")
    assert path.read_bytes()[:8] == PNG_MAGIC
