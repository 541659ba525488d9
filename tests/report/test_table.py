"""The cells and lines of the report: numbers, mean ± std, p-values, parameter counts, replicates, significance,
failed runs and rank stability, each on hand-made values (whole tables: ``tests/report/test_main.py``)."""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from graphbench.report.collect import FailedRun, collect
from graphbench.report.stats import GroupSummary, RankStability, summarize_block
from graphbench.report.table import (
    format_csv,
    format_epoch,
    format_failed,
    format_markdown_table,
    format_mean_std,
    format_number,
    format_p_value,
    format_params,
    format_rank_stability,
    format_replicates,
    significance_marker,
)
from tests.report._runs import write_run

ROW = GroupSummary(
    label="model=gcn",
    n=6,
    seeds=(0, 1, 2, 0, 1, 2),
    test_mean=0.62,
    test_std=0.02,
    val_mean=0.66,
    val_std=0.01,
    num_params=100000.0,
    num_params_equal=True,
    time_per_epoch_s=3.2,
    best_epoch=12.0,
    p_value=0.01,
    significant=True,
    is_best=False,
    folds=("a", "a", "a", "b", "b", "b"),
    p_holm=0.02,
)


def test_numbers_and_mean_std_have_fixed_decimals_and_nan_is_not_available() -> None:
    assert format_number(3.14159, 2) == "3.14" and format_number(math.nan, 2) == "n/a"
    assert format_mean_std(0.62, 0.02) == "0.6200 ± 0.0200"
    assert format_mean_std(0.62, math.nan) == "0.6200 ± n/a"


@pytest.mark.parametrize(("p", "text"), [(0.5, "0.5000"), (0.001, "0.0010"), (0.00012345, "1.23e-04"), (math.nan, "n/a")])
def test_p_values_switch_to_scientific_notation_below_one_in_a_thousand(p: float, text: str) -> None:
    assert format_p_value(p) == text


def test_parameter_counts_are_exact_when_equal_over_runs_else_a_mean() -> None:
    assert format_params(ROW) == "100,000" and format_params(replace(ROW, num_params=99804.0)) == "99,804"
    assert format_params(replace(ROW, num_params=99166.66, num_params_equal=False)) == "99,166.7 (mean)"
    assert format_params(replace(ROW, num_params=math.nan)) == "n/a"


def test_replicates_are_folds_times_seeds_or_how_many_of_them() -> None:
    assert format_replicates(ROW) == "6 (2 × 3)"
    assert format_replicates(replace(ROW, n=5, seeds=ROW.seeds[:5], folds=ROW.folds[:5])) == "5 of 2 × 3"


def test_significance_marker() -> None:
    assert significance_marker(replace(ROW, is_best=True)) == "best"
    assert significance_marker(ROW) == "*"
    assert significance_marker(replace(ROW, significant=False)) == "ns"
    assert significance_marker(replace(ROW, p_holm=math.nan)) == "n/a"


def test_failed_runs_are_listed_with_status_and_label() -> None:
    assert format_failed([]) == "Failed runs: none."
    failed = [FailedRun(Path("m/6"), "failed: diverged", "model=gcn"), FailedRun(Path("m/7"), "running")]
    assert format_failed(failed) == "Failed runs (2):\n- m/6: failed: diverged [model=gcn]\n- m/7: running"


def test_pruned_trials_are_listed_apart_from_the_failed_runs() -> None:
    pruned = [FailedRun(Path("s/3"), "pruned at epoch 2", "optimizer.lr=0.1"), FailedRun(Path("s/5"), "pruned at epoch 0")]
    assert format_failed(pruned) == (
        "Failed runs: none.\n\n"
        "Pruned trials (2), stopped early by the Optuna search's pruner, not in the tables:\n"
        "- s/3: pruned at epoch 2 [optimizer.lr=0.1]\n- s/5: pruned at epoch 0"
    )
    mixed = format_failed([FailedRun(Path("s/1"), "failed: boom"), *pruned])
    assert mixed.startswith("Failed runs (1):\n- s/1: failed: boom\n\nPruned trials (2)")
    rows = list(csv.DictReader(io.StringIO(format_csv([], [FailedRun(Path("s/1"), "failed: boom"), *pruned]))))
    assert [(r["kind"], r["path"], r["status"]) for r in rows] == [
        ("failed", "s/1", "failed: boom"),
        ("pruned", "s/3", "pruned at epoch 2"),
        ("pruned", "s/5", "pruned at epoch 0"),
    ]


def test_rank_stability_line_with_and_without_its_numbers() -> None:
    head = "Rank stability across seeds (Li et al., IJCAI 2022, arXiv:2205.14403):"
    missing = RankStability(seeds=(0,), n_groups=2, mean_inversions=math.nan, max_inversions=0, max_possible=1, reason="one seed")
    assert format_rank_stability(missing) == f"{head} not computed (one seed)."
    rank = RankStability(
        seeds=(0, 1, 2), n_groups=2, mean_inversions=2 / 3, max_inversions=1, max_possible=1, reference_seed=0, igb_inversions=2
    )
    assert format_rank_stability(rank) == (
        f"{head} IGB's inversion number 2 (inversions against seed 0's ranking, summed over the 2 other seeds; "
        "at most 2); all-pairs inversion number mean 0.67, max 1 discordant group pairs over 3 seed pairs "
        "(at most 1 per seed pair); seeds 0, 1, 2; 2 groups."
    )


def test_a_best_epoch_is_an_integer_unless_runs_disagree() -> None:
    assert (format_epoch(0.0), format_epoch(15.0), format_epoch(15.5), format_epoch(math.nan)) == ("0", "15", "15.5", "n/a")


def test_runs_evaluated_on_part_of_a_split_are_marked_in_the_table_and_noted(tmp_path: Path) -> None:
    write_run(tmp_path / "full", dataset="d", model="gcn", seed=0, test=0.8)
    partial = write_run(tmp_path / "partial", dataset="d", model="gin", seed=0, test=0.5)
    record = json.loads((partial / "results.json").read_text())
    record["config"]["trainer"].update(limit_test_batches=1, limit_val_batches=1.0)  # one test batch; the whole val split
    (partial / "results.json").write_text(json.dumps(record))
    (block,) = collect([tmp_path]).blocks
    assert sorted(group.label for group in block.groups) == ["model=gcn", "model=gin [partial evaluation]"]
    table = format_markdown_table(summarize_block(block))
    assert "| model=gin [partial evaluation] |" in table
    assert (
        "Note: model=gin [partial evaluation]: runs with trainer.limit_test_batches=1 (validated or tested on part of "
        "the split); their numbers are not results"
    ) in table


def test_a_table_without_a_test_says_so_instead_of_correcting_over_zero_tests(tmp_path: Path) -> None:
    write_run(tmp_path / "a", dataset="d", model="gcn", seed=0, test=0.8)
    write_run(tmp_path / "b", dataset="d", model="gin", seed=0, test=0.5)  # one run per group: no Welch test
    table = format_markdown_table(summarize_block(collect([tmp_path]).blocks[0]))
    assert "Holm-corrected over the 0 tests" not in table
    assert "p: no test in this table (Welch's t-test needs a second group and two runs in each)." in table
    for seed in (1, 2):
        write_run(tmp_path / f"a{seed}", dataset="d", model="gcn", seed=seed, test=0.8 + seed / 100)
        write_run(tmp_path / f"b{seed}", dataset="d", model="gin", seed=seed, test=0.5 + seed / 100)
    table = format_markdown_table(summarize_block(collect([tmp_path]).blocks[0]))
    assert "Holm-corrected over the 1 test of this table" in table


def test_fast_dev_run_groups_are_marked_in_the_table_and_noted(tmp_path: Path) -> None:
    write_run(tmp_path / "full", dataset="d", model="gcn", seed=0, test=0.8)
    smoke = write_run(tmp_path / "smoke", dataset="d", model="gin", seed=0, test=0.5)
    record = json.loads((smoke / "results.json").read_text())
    record["config"]["trainer"]["fast_dev_run"] = True
    (smoke / "results.json").write_text(json.dumps(record))
    (block,) = collect([tmp_path]).blocks
    assert sorted(group.label for group in block.groups) == ["model=gcn", "model=gin [fast_dev_run]"]
    table = format_markdown_table(summarize_block(block))
    assert "| model=gin [fast_dev_run] |" in table and "| model=gcn |" in table
    assert "Note: model=gin [fast_dev_run]: trainer.fast_dev_run runs (a smoke test" in table
    assert "| 1,000 |" in table and "| 1 |" in table  # parameters with separators, the best epoch an integer
