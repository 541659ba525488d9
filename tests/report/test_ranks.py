"""Tests for graphbench.report.ranks: ranks over datasets, Friedman's test, Nemenyi's critical difference.

Fabricated runs (:func:`tests.report._runs.two_datasets`, one seed each): mutag (accuracy, higher is better) gcn 0.9, gin 0.8, mlp 0.7,
sage 0.6 (sage only on mutag); zinc (mae, lower is better) gcn 0.3, gin 0.2, mlp 0.5.
Ranks: mutag gcn 1, gin 2, mlp 3; zinc gin 1, gcn 2, mlp 3 (sage is left out: not on zinc).
Average ranks gcn 1.5, gin 1.5, mlp 3. Friedman with N = 2, k = 3:
chi² = 12 N / (k (k + 1)) (sum R_j² - k (k + 1)² / 4) = 2 (2.25 + 2.25 + 9 - 12) = 3, and with
2 degrees of freedom p = exp(-3 / 2). Nemenyi CD = q_0.05(3) sqrt(3 * 4 / (6 * 2)) = 2.343.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from graphbench.report.collect import collect
from graphbench.report.ranks import RankTable, cliques, nemenyi_critical_difference, rank_table, task_names
from graphbench.report.stats import summarize_block
from tests.report._runs import two_datasets, write_run


def test_nemenyi_critical_difference_matches_demsar_table() -> None:
    # Demšar (2006) Table 5a, alpha = 0.05: q = 1.960, 2.343, 2.569, 2.728 for k = 2, 3, 4, 5
    for k, q in ((2, 1.960), (3, 2.343), (4, 2.569), (5, 2.728)):
        assert nemenyi_critical_difference(k, 6, 0.05) / math.sqrt(k * (k + 1) / 36) == pytest.approx(q, abs=1e-3)
    with pytest.raises(ValueError, match="k >= 2 configurations and n >= 1 blocks, got k=1, n=3"):
        nemenyi_critical_difference(1, 3)


def test_rank_table_over_two_datasets(tmp_path: Path) -> None:
    summaries = [summarize_block(block) for block in collect([two_datasets(tmp_path)]).blocks]
    table = rank_table(summaries)
    assert table is not None and table.reason is None
    assert table.tasks == ("mutag", "zinc")
    assert table.configs == ("model=gcn", "model=gin", "model=mlp")
    assert table.ranks == ((1.0, 2.0), (2.0, 1.0), (3.0, 3.0))
    assert table.average_ranks == (1.5, 1.5, 3.0)
    assert table.left_out == ("model=sage",)
    assert table.friedman_statistic == pytest.approx(3.0, abs=1e-12)
    assert table.friedman_p == pytest.approx(math.exp(-1.5), rel=1e-9)
    assert table.critical_difference == pytest.approx(2.3437, abs=1e-4)
    assert not table.friedman_rejects and table.different_pairs() == []


def test_rank_table_needs_two_blocks_and_three_configurations_for_friedman(tmp_path: Path) -> None:
    for model, value in (("gcn", 0.9), ("mlp", 0.7)):
        write_run(tmp_path / f"a-{model}", dataset="a", model=model, seed=0, test=value)
        write_run(tmp_path / f"b-{model}", dataset="b", model=model, seed=0, test=value - 0.1)
    summaries = [summarize_block(block) for block in collect([tmp_path]).blocks]
    assert rank_table(summaries[:1]) is None
    table = rank_table(summaries)
    assert table is not None and table.average_ranks == (1.0, 2.0)
    assert table.reason == "the Friedman test needs >= 3 configurations, got 2" and math.isnan(table.friedman_p)
    assert table.critical_difference == pytest.approx(1.96 * math.sqrt(6 / 12), abs=1e-3)


def test_pairs_beyond_the_critical_difference_and_cliques() -> None:
    table = RankTable(
        tasks=("d1", "d2"),
        configs=("a", "b", "c"),
        ranks=((1.0, 1.0), (2.0, 2.0), (3.0, 3.0)),
        left_out=(),
        alpha=0.05,
        friedman_p=0.01,
        critical_difference=1.5,
    )
    assert table.friedman_rejects
    assert table.different_pairs() == [("a", "c")]  # 3 - 1 = 2 > 1.5; the neighbours differ by 1
    assert cliques([1.0, 2.0, 3.0], 1.5) == [(0, 1), (1, 2)]
    assert cliques([1.0, 1.2, 1.4], 1.5) == [(0, 2)]


def test_task_names_add_the_tabulated_key_when_a_dataset_has_two_blocks(tmp_path: Path) -> None:
    write_run(tmp_path / "0", dataset="d", model="gcn", seed=0, test=0.5, metric="ap")
    write_run(tmp_path / "1", dataset="d", model="gcn", seed=0, test=0.5, metric="auroc")
    write_run(tmp_path / "2", dataset="e", model="gcn", seed=0, test=0.5)
    summaries = [summarize_block(block) for block in collect([tmp_path]).blocks]
    assert task_names(summaries) == ["d (test/ap)", "d (test/auroc)", "e"]
