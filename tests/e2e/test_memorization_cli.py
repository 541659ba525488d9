"""``task=memorization`` through the real CLI on a tiny Texas fixture, on the rewired graph, and the
multirun aggregation ``python -m graphbench.analysis memorization``."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from torch_geometric.utils import degree, to_undirected

from graphbench.analysis.__main__ import main as analysis_main
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.node.geom_gcn import read_geom_gcn
from graphbench.report.collect import collect
from graphbench.transforms.rewiring import RewireFeatureSimilarity
from tests.data.sources.node.test_geom_gcn import write_geom_gcn
from tests.e2e.test_cli import run_cli

N = 60
TINY = [
    "task=memorization",
    "task.num_seeds=1",
    "dataset=texas",
    "model=gcn",
    "model.hidden_dim=8",
    "model.num_layers=1",
    "normalization=none",
    "scheduler=none",
    "trainer.max_epochs=2",
    "trainer.enable_progress_bar=false",
    "logger=none",
]


def test_memorization_run_writes_csv_summary_and_histogram_on_the_rewired_graph(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_geom_gcn(tmp_path / "data", "texas", num_nodes=N)
    run_dir = tmp_path / "run"
    proc = run_cli(
        [
            *TINY,
            "+transform=rewire_feature_similarity",
            "transform.budget=40",
            "transform.mode=add",
            f"paths.data_dir={tmp_path / 'data'}",
            f"hydra.run.dir={run_dir}",
        ],
        tmp_path,
        env={"OMP_NUM_THREADS": "1"},  # tiny kernels: one thread avoids contention on a busy machine
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((run_dir / "results.json").read_text())
    assert results["status"] == "completed"
    metrics = results["metrics"]
    assert {"memorization/rate", "memorization/rate_control", "test/accuracy_f", "test/accuracy_g"} <= set(metrics)
    assert results["config"]["transform"]["budget"] == 40
    with open(run_dir / "memorization.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0])[:6] == ["node", "set", "label", "mem", "degree", "LDS"]
    sizes = {name: sum(r["set"] == name for r in rows) for name in ("shared", "candidate", "independent", "control")}
    assert sizes["candidate"] == sizes["control"] > 0 and sizes["shared"] > 0 and sizes["independent"] > 0
    candidates = [float(r["mem"]) for r in rows if r["set"] == "candidate"]
    assert metrics["memorization/rate"] == sum(m > 0.5 for m in candidates) / len(candidates)
    # the degrees are those of the rewired graph
    rewired = RewireFeatureSimilarity(budget=40, mode="add")(read_geom_gcn(RawRoot(tmp_path / "data"), "texas"))
    raw = read_geom_gcn(RawRoot(tmp_path / "data"), "texas")
    rewired_degree = degree(to_undirected(rewired.edge_index, num_nodes=N)[0], num_nodes=N)
    raw_degree = degree(to_undirected(raw.edge_index, num_nodes=N)[0], num_nodes=N)
    assert [int(r["degree"]) for r in rows] == [int(rewired_degree[int(r["node"])]) for r in rows]
    assert rewired_degree.sum() == raw_degree.sum() + 80
    assert (run_dir / "memorization_hist.png").stat().st_size > 0
    collection = collect([run_dir])
    assert not collection.failed
    ((block, (group,)),) = [(b, b.groups) for b in collection.blocks]
    assert (block.test_key, block.higher_is_better) == ("memorization/rate", False)
    assert group.runs[0].value(block.test_key) == metrics["memorization/rate"]
    assert analysis_main(["memorization", str(tmp_path)]) == 0
    assert "| texas |  | gcn | best | rewire_feature_similarity(budget=40, mode=add) | 0 |" in capsys.readouterr().out
