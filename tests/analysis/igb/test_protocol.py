"""The select-then-retrain protocol: one recipe per grid point, the retrain with the chosen setting for each graph's
selected epochs (or the selection fits' test without it), and the i.i.d. evaluation's rows and metrics."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from graphbench.analysis.igb import fit as fit_module
from graphbench.analysis.igb.fit import FitResult, GridChoice
from graphbench.analysis.igb.protocol import IidEvaluation, grid_recipes, search_and_retrain, write_rows
from graphbench.analysis.igb.sampler import SampledSubgraph, SamplerStats
from graphbench.analysis.subset_training import node_datamodule
from tests.tasks.test_igb import cora_cfg, fake_fit


def test_grid_recipes_follow_the_points(tmp_path: Path) -> None:
    cfg = cora_cfg(tmp_path)
    points, recipes = grid_recipes(cfg, node_datamodule(cfg).info, {"model": {"hidden_dim": [8, 16]}})
    assert points == [{"model.hidden_dim": 8}, {"model.hidden_dim": 16}]
    assert [r.hidden_dim for r in recipes] == [8, 16]


def test_search_and_retrain_retrains_each_graph_for_its_selected_epochs(tmp_path: Path, monkeypatch) -> None:
    cfg = cora_cfg(tmp_path, "dataset.split=igb")
    dm = node_datamodule(cfg)
    small = dm.graph.subgraph(torch.arange(5))
    n = int(dm.graph.num_nodes)
    scores = {(0.01, n): (0.6, 2), (0.01, 5): (0.9, 3), (0.1, n): (0.5, 1), (0.1, 5): (0.5, 1)}
    calls: list[tuple[float, bool, int]] = []
    monkeypatch.setattr(fit_module, "fit", fake_fit(scores, calls))
    grid = {"optimizer": {"lr": [0.01, 0.1]}}
    choice, tests = search_and_retrain(cfg, dm.info, grid, [dm.graph, small])
    assert choice.point == {"optimizer.lr": 0.01} and tests == [0.01, 0.01]  # fake_fit's test accuracy is its lr
    assert calls[-2:] == [(0.01, False, 2), (0.01, False, 3)]
    calls.clear()
    _, tests = search_and_retrain(cfg, dm.info, grid, [dm.graph, small], retrained=False)
    assert tests == [0.01, 0.01] and all(select for _, select, _ in calls)


def evaluation(tests: list[float]) -> IidEvaluation:
    samples = [
        SampledSubgraph(np.arange(4 + 2 * i), np.arange(3 + i), 0.1 * (i + 1), 0.2 * (i + 1), i) for i in range(len(tests))
    ]
    selections = [FitResult(2 + 2 * i, 0.5 + 0.1 * i, 0.4, 0.3, torch.zeros(0)) for i in range(len(tests))]
    choice = GridChoice(0, {"optimizer.lr": 0.01}, None, selections, [0.4])  # type: ignore[arg-type]
    return IidEvaluation(samples, SamplerStats(proposed=8, accepted=4, kept=len(tests)), 0.25, 0.5, choice, tests)


def test_iid_rows_and_metrics_summarise_the_subgraphs(tmp_path: Path) -> None:
    result = evaluation([0.6, 0.8, 0.7])
    rows = result.rows()
    assert [r["subgraph"] for r in rows] == [0, 1, 2] and rows[1]["nodes"] == 6 and rows[1]["edges"] == 4
    assert rows[2]["selected_epochs"] == 6 and rows[2]["test_accuracy"] == 0.7
    assert result.median_selected_epochs == 4
    m = result.metrics()
    assert m["test/accuracy"] == pytest.approx(0.7) and m["test/accuracy_std"] == pytest.approx(0.1)
    assert m["train/accuracy"] == pytest.approx(0.6) and m["iid/mean_nodes"] == 6.0
    assert (m["iid/num_subgraphs"], m["iid/overlap"], m["iid/coverage"], m["iid/acceptance_rate"]) == (3.0, 0.25, 0.5, 0.5)
    assert m["iid/mean_node_kl"] == pytest.approx(0.2) and m["grid/optimizer.lr"] == 0.01
    assert math.isnan(evaluation([0.6]).metrics()["test/accuracy_std"])
    write_rows(tmp_path / "rows.csv", rows)
    with (tmp_path / "rows.csv").open() as handle:
        assert [int(r["nodes"]) for r in csv.DictReader(handle)] == [4, 6, 8]
