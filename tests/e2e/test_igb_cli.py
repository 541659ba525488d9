"""``python run.py task=iid_eval`` end to end on a tiny Cora fixture, then ``igb-ranks`` on its output."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from tests.data.sources.node.planetoid_fixture import write_planetoid
from tests.e2e.test_cli import cli_env, run_cli
from tests.paths import REPO
from tests.warm_python import run_python


def test_iid_eval_writes_mean_std_overlap_and_coverage(tmp_path: Path) -> None:
    write_planetoid(tmp_path / "data", "cora")
    sweep = tmp_path / "multirun"
    result = run_cli(
        [
            "-m",
            "task=iid_eval",
            "experiment=planetoid/cora-gcn",
            "model=gcn,sage",
            "seed=0,1",
            "task.num_subgraphs=3",
            "task.num_edges=40",
            "task.burn_in=1",
            "trainer.max_epochs=2",
            f"paths.data_dir={tmp_path / 'data'}",
            f"hydra.sweep.dir={sweep}",
        ],
        tmp_path,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    record = json.loads((sweep / "0" / "results.json").read_text())
    assert record["status"] == "completed"
    metrics = record["metrics"]
    assert metrics["iid/num_subgraphs"] == 3 and 0 < metrics["iid/coverage"] <= 1 and 0 <= metrics["iid/overlap"] <= 1
    with (sweep / "0" / "iid_eval.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    accuracies = [float(r["test_accuracy"]) for r in rows]
    assert len(rows) == 3 and all(int(r["edges"]) == 40 for r in rows)
    assert metrics["test/accuracy"] == sum(accuracies) / 3
    selected = sorted(int(r["selected_epochs"]) for r in rows)  # epoch counts of the fits
    assert (record["best_epoch"], record["epochs_trained"]) == (selected[1] - 1, 2)  # the median, numbered from 0
    command = ["-m", "graphbench.analysis", "igb-ranks", "--public", str(sweep), "--iid", str(sweep)]
    ranks = run_python(command, REPO, cli_env(), timeout=300)
    assert ranks.returncode == 0, ranks.stderr
    assert "| gcn |" in ranks.stdout and "| sage |" in ranks.stdout and "inversion number" in ranks.stdout
