"""task=mia: one fast ``python run.py task=mia`` run on a tiny Cora, and a bad shadow count as a one-line failure."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from omegaconf import DictConfig

from graphbench.report.collect import collect
from graphbench.tasks.mia import mia
from tests.data.sources.node.planetoid_fixture import write_planetoid
from tests.e2e.test_cli import run_cli

#: a tiny Cora (the Planetoid fixture: 532 nodes, 3 classes) split 60/20/20, a 2-layer GCN of width 8
TINY_CORA = [
    "task=mia",
    "dataset=cora",
    "dataset.split=random",
    "model=gcn",
    "model.hidden_dim=8",
    "model.num_layers=2",
    "trainer.max_epochs=3",
    "trainer.enable_progress_bar=false",
]


def test_cli_runs_lira_and_writes_results_and_the_node_table(tmp_path: Path) -> None:
    write_planetoid(tmp_path / "data")
    run_dir = tmp_path / "run"
    args = [*TINY_CORA, "task.num_shadows=6", f"paths.data_dir={tmp_path / 'data'}", f"hydra.run.dir={run_dir}"]
    proc = run_cli(args, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "metrics: mia_auc = " in proc.stdout
    results = json.loads((run_dir / "results.json").read_text())
    assert results["status"] == "completed"
    metrics = results["metrics"]
    for key in ("mia_auc", "mia_tpr_at_1pct_fpr", "mia_offline_auc", "mia_offline_tpr_at_1pct_fpr", "test/accuracy"):
        assert 0.0 <= metrics[key] <= 1.0, key
    with (run_dir / "mia.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == round(0.6 * 532)  # the pool: the training nodes of the 60/20/20 split
    assert {(row["num_in"], row["num_out"]) for row in rows} == {("3", "3")}
    assert len(list((run_dir / "shadows").iterdir())) == 6
    collection = collect([run_dir])
    assert not collection.failed and [b.test_key for b in collection.blocks] == ["mia_auc"]
    assert collection.blocks[0].groups[0].runs[0].value("mia_auc") == metrics["mia_auc"]


def test_bad_shadow_count_fails_the_run_with_one_line(tmp_path: Path, compose_cfg) -> None:
    write_planetoid(tmp_path / "data")
    cfg: DictConfig = compose_cfg([*TINY_CORA, f"paths.data_dir={tmp_path / 'data'}"])
    record = mia(cfg, num_shadows=5)
    assert record.status.startswith("failed: task.num_shadows=5 is not valid")
    assert json.loads((tmp_path / "run" / "results.json").read_text())["status"] == record.status
