"""``python -m graphbench.analysis.ntk_curves``: reading the NTK callback's CSV, labels, the table, the plot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphbench.analysis.ntk_curves import main, read_curves, run_label, summary_table

HEADER = (
    "epoch,ntk/kernel_target_alignment,ntk/kernel_target_alignment_centered,ntk/kernel_graph_alignment,"
    "ntk/kernel_graph_alignment_centered,ntk/graph_target_alignment,ntk/graph_target_alignment_centered"
)


def write_run(run_dir: Path, rows: list[str], homophily: float | None = 0.0) -> Path:
    run_dir.mkdir(parents=True)
    (run_dir / "ntk_alignment.csv").write_text("\n".join([HEADER, *rows]) + "\n")
    dataset = {"name": "syn-cora"} if homophily is None else {"name": "syn-cora", "homophily": homophily}
    (run_dir / "results.json").write_text(
        json.dumps({"status": "completed", "config": {"dataset": dataset, "model": {"name": "gcn"}}})
    )
    return run_dir


def test_curves_are_read_in_epoch_order_and_labelled_from_the_config(tmp_path: Path) -> None:
    run = write_run(tmp_path / "a", ["2,0.5,0.25,0.75,0.5,0.3,0.1", "0,0.25,0.125,0.5,0.25,0.3,0.1"])
    curves = read_curves(run)
    assert curves["epoch"] == [0.0, 2.0]
    assert curves["ntk/kernel_target_alignment"] == [0.25, 0.5]
    assert curves["ntk/graph_target_alignment_centered"] == [0.1, 0.1]
    assert run_label(run) == "gcn on syn-cora h=0.0"
    assert run_label(write_run(tmp_path / "b", ["0,1,1,1,1,1,1"], homophily=None)) == "gcn on syn-cora"
    assert run_label(tmp_path) == tmp_path.name  # no results.json: the directory's name
    table = summary_table({"A": curves})
    assert "| A | kernel_target_alignment | 0 | 2 | 0.2500 | 0.5000 |" in table
    assert "| A | kernel_graph_alignment_centered | 0 | 2 | 0.2500 | 0.5000 |" in table
    assert table.count("\n") == 2 + 6


def test_cli_prints_the_table_and_writes_the_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_run(tmp_path / "h0", ["0,0.2,0.1,0.5,0.4,0.3,0.1", "1,0.3,0.2,0.6,0.5,0.3,0.1"], homophily=0.0)
    b = write_run(tmp_path / "h1", ["0,0.4,0.3,0.7,0.6,0.9,0.8", "1,0.6,0.5,0.8,0.7,0.9,0.8"], homophily=1.0)
    png = tmp_path / "fig" / "ntk.png"
    assert main([str(a), str(b), "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "| gcn on syn-cora h=1.0 | kernel_target_alignment | 0 | 1 | 0.4000 | 0.6000 |" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_run_without_the_csv_is_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "plain").mkdir()
    assert main([str(tmp_path / "plain")]) == 1
    assert "run the model with callbacks=ntk" in capsys.readouterr().err
