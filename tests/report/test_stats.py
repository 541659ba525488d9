"""Tests for graphbench.report.stats: every expected value is computed by hand in the test."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from graphbench.report.collect import Block, Group, Run
from graphbench.report.stats import (
    count_discordant_pairs,
    holm,
    igb_inversion_number,
    mean,
    rank_stability,
    sample_std,
    summarize_block,
    welch_p_value,
)
from graphbench.run.record import RunRecord


def t_cdf_4(t: float) -> float:
    """Student t CDF with 4 degrees of freedom, closed form (no scipy)."""
    return 0.5 + (3.0 / 8.0) * (t / math.sqrt(1 + t * t / 4)) * (1 - (t * t / (1 + t * t / 4)) / 12.0)


def two_sided_p_by_simpson(t: float, df: float, intervals: int = 4000) -> float:
    """2 P(T > |t|) = 1 - 2 * integral_0^|t| of the Student t density, by Simpson's rule."""
    norm = math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2))

    def density(x: float) -> float:
        return norm * (1 + x * x / df) ** (-(df + 1) / 2)

    h = abs(t) / intervals
    total = density(0.0) + density(abs(t))
    total += sum((4 if k % 2 else 2) * density(k * h) for k in range(1, intervals))
    return 1 - 2 * total * h / 3


def test_mean_and_sample_std_use_ddof_1() -> None:
    assert mean([0.60, 0.62, 0.64]) == pytest.approx(0.62, abs=1e-12)
    # deviations -0.02, 0, 0.02 -> sum of squares 0.0008 / (3 - 1) = 0.0004
    assert sample_std([0.60, 0.62, 0.64]) == pytest.approx(0.02, abs=1e-12)
    # [1, 2, 3, 4]: sum of squares 5; ddof=1 gives sqrt(5/3), not the population sqrt(5/4)
    assert sample_std([1.0, 2.0, 3.0, 4.0]) == pytest.approx(math.sqrt(5 / 3), abs=1e-12)
    assert sample_std([1.0, 2.0, 3.0, 4.0]) != pytest.approx(math.sqrt(5 / 4))


def test_mean_and_std_skip_nan_and_are_undefined_when_too_few() -> None:
    assert mean([1.0, math.nan, 3.0]) == 2.0
    assert math.isnan(mean([]))
    assert math.isnan(sample_std([0.5]))


def test_welch_equal_variances_matches_closed_form_with_4_df() -> None:
    a, b = [0.60, 0.62, 0.64], [0.50, 0.52, 0.54]
    # s_a^2 = s_b^2 = 0.0004, n = 3 -> se^2 = 0.0008/3; nu = (2v)^2 / (2 v^2 / 2) = 4 exactly
    t = 0.1 / math.sqrt(0.0008 / 3)
    expected = 2 * (1 - t_cdf_4(t))
    assert expected == pytest.approx(0.0036023, abs=1e-6)
    assert welch_p_value(a, b) == pytest.approx(expected, rel=1e-9)


def test_welch_unequal_variances_matches_hand_formula() -> None:
    a, b = [1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 9.0]
    va, vb = (5 / 3) / 4, 13.0 / 3  # s^2 / n: s_a^2 = 5/3, s_b^2 = (9 + 1 + 16) / 2 = 13
    t = (2.5 - 5.0) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / 3 + vb**2 / 2)  # Welch-Satterthwaite
    # exactly (361/16) / (25/432 + 169/18) = 9747/4081
    assert df == pytest.approx(9747 / 4081, rel=1e-12)
    expected = two_sided_p_by_simpson(t, df)
    assert welch_p_value(a, b) == pytest.approx(expected, rel=1e-7)


def test_welch_is_undefined_for_fewer_than_two_runs() -> None:
    assert math.isnan(welch_p_value([0.5], [0.4, 0.6]))


def test_count_discordant_pairs_on_hand_rankings() -> None:
    # items A, B, C; higher is better
    assert count_discordant_pairs([0.9, 0.8, 0.7], [0.9, 0.8, 0.7]) == 0
    assert count_discordant_pairs([0.9, 0.8, 0.7], [0.8, 0.9, 0.7]) == 1  # only (A, B) swaps
    assert count_discordant_pairs([0.9, 0.8, 0.7], [0.7, 0.8, 0.9]) == 3  # full reversal
    # ties are never discordant: (A,B) tied in x, (B,C) tied in y, only (A,C) flips
    assert count_discordant_pairs([1.0, 1.0, 0.0], [0.0, 1.0, 1.0]) == 1
    with pytest.raises(ValueError, match="different lengths"):
        count_discordant_pairs([1.0], [1.0, 2.0])


def test_rank_stability_three_models_three_seeds() -> None:
    # seed 0: A > B > C;  seed 1: B > A > C;  seed 2: C > B > A
    # I(0,1) = 1 (A,B);  I(0,2) = 3 (all);  I(1,2) = 2 (A,C and B,C) -> mean 2, max 3
    per_seed = [
        {0: 0.90, 1: 0.80, 2: 0.70, 3: 0.10},  # A; seed 3 is not shared, so ignored
        {0: 0.80, 1: 0.90, 2: 0.80},  # B
        {0: 0.70, 1: 0.70, 2: 0.90},  # C
    ]
    rank = rank_stability(per_seed)
    assert rank.reason is None
    assert rank.seeds == (0, 1, 2)
    assert rank.n_seed_pairs == 3
    assert rank.mean_inversions == pytest.approx(2.0)
    assert rank.max_inversions == 3
    assert rank.max_possible == 3
    # IGB's: seed 0 the reference, I(0,1) + I(0,2) = 1 + 3
    assert (rank.reference_seed, rank.igb_inversions, rank.igb_max_possible) == (0, 4, 6)
    assert rank_stability(per_seed, reference_seed=2).igb_inversions == 3 + 2  # I(2,0) + I(2,1)
    with pytest.raises(ValueError, match=r"reference seed 3 is not a seed every group has; valid: \[0, 1, 2\]"):
        rank_stability(per_seed, reference_seed=3)


def test_igb_inversion_number_of_three_seeds_rankings() -> None:
    """The paper's number: one seed's ranking is the reference, the other seeds' inversions are summed.

    Four models A, B, C, D (higher is better):
    seed 0: A > B > C > D   (the reference)
    seed 1: B > A > D > C   I(0,1) = 2: (A,B) and (C,D) swap
    seed 2: D > C > B > A   I(0,2) = 6: the full reversal, all C(4,2) pairs
    IGB's inversion number = 2 + 6 = 8. With seed 1 as reference: I(1,0) + I(1,2) = 2 + 4, since
    seed 2 against seed 1 keeps (A,B) and (C,D) and swaps the other 4 pairs. The all-pairs
    inversion number: I(0,1), I(0,2), I(1,2) = 2, 6, 4, mean 4, max 6.
    """
    rankings = {
        0: [4.0, 3.0, 2.0, 1.0],
        1: [3.0, 4.0, 1.0, 2.0],
        2: [1.0, 2.0, 3.0, 4.0],
    }  # rankings[seed] = the metric of A, B, C, D
    assert igb_inversion_number(rankings, reference_seed=0) == 8
    assert igb_inversion_number(rankings, reference_seed=1) == 6
    assert igb_inversion_number(rankings, reference_seed=2) == 10
    with pytest.raises(ValueError, match=r"reference seed 5 is not among the seeds \[0, 1, 2\]"):
        igb_inversion_number(rankings, reference_seed=5)
    per_group = [{seed: values[g] for seed, values in rankings.items()} for g in range(4)]
    rank = rank_stability(per_group)
    assert (rank.reference_seed, rank.igb_inversions, rank.igb_max_possible) == (0, 8, 12)
    assert (rank.mean_inversions, rank.max_inversions, rank.n_seed_pairs) == (4.0, 6, 3)


def test_holm_step_down_on_hand_values() -> None:
    # sorted finite p: 0.01, 0.03, 0.04 (m = 3): 3 * 0.01 = 0.03; max(0.03, 2 * 0.03) = 0.06; max(0.06, 1 * 0.04) = 0.06
    assert holm([0.01, 0.04, 0.03, math.nan])[:3] == pytest.approx([0.03, 0.06, 0.06], abs=1e-15)
    assert math.isnan(holm([0.01, 0.04, 0.03, math.nan])[3])
    assert holm([0.5, 0.6]) == [1.0, 1.0]  # 2 * 0.5 capped at 1, then kept monotone
    assert holm([0.02]) == [0.02] and holm([]) == []


def test_rank_stability_needs_two_shared_seeds() -> None:
    rank = rank_stability([{0: 0.5, 1: 0.6}, {1: 0.7, 2: 0.4}])
    assert math.isnan(rank.mean_inversions)
    assert rank.reason is not None and "shared seeds [1]" in rank.reason


def make_run(model: str, seed: int, test: float, val: float, params: int, higher: bool, metric: str) -> Run:
    record = {
        "status": "completed",
        "num_params": params,
        "best_epoch": seed + 1,
        "time_per_epoch_s": 2.0,
        "higher_is_better": higher,
        "metric": metric,
        "metrics": {f"test/{metric}": test, f"val/{metric}": val},
    }
    config = {"seed": seed, "model": {"name": model}}
    return Run(Path(f"runs/{model}/{seed}"), "completed", config, RunRecord.from_dict({**record, "config": config}))


def test_summarize_block_lower_is_better_picks_min_and_marks_significance() -> None:
    mae_a, mae_b = [0.10, 0.12, 0.14], [0.20, 0.22, 0.24]
    group_a = Group("a", {}, [make_run("a", s, v, v + 0.01, 1000, False, "mae") for s, v in enumerate(mae_a)], "model=a")
    group_b = Group("b", {}, [make_run("b", s, v, v, 1000 + s, False, "mae") for s, v in enumerate(mae_b)], "model=b")
    summary = summarize_block(Block("zinc", "mae", False, [group_b, group_a]), alpha=0.05)
    best, other = summary.rows
    assert (best.label, best.is_best, other.label) == ("model=a", True, "model=b")
    assert best.test_mean == pytest.approx(0.12) and best.test_std == pytest.approx(0.02)
    assert best.val_mean == pytest.approx(0.13)
    assert best.num_params == 1000 and best.num_params_equal
    assert other.num_params == pytest.approx(1001.0) and not other.num_params_equal
    assert best.best_epoch == pytest.approx(2.0)  # epochs 1, 2, 3
    t = 0.1 / math.sqrt(0.0008 / 3)  # df = 4 as above
    assert other.p_value == pytest.approx(2 * (1 - t_cdf_4(t)), rel=1e-9)
    assert other.significant and math.isnan(best.p_value)
    assert summary.rank.mean_inversions == 0.0 and summary.rank.max_inversions == 0


def test_repeated_seed_is_noted_and_averaged_for_rank_stability() -> None:
    # A: seed 0 run twice (0.5, 0.7 -> 0.6), seed 1 0.4;  B: seed 0 0.65, seed 1 0.3
    # seed 0: B (0.65) > A (0.6); seed 1: A (0.4) > B (0.3) -> 1 inversion (0 if 0.7 alone were used)
    runs_a = [
        make_run("a", 0, 0.5, 0.5, 10, True, "ap"),
        make_run("a", 0, 0.7, 0.7, 10, True, "ap"),
        make_run("a", 1, 0.4, 0.4, 10, True, "ap"),
    ]
    runs_b = [make_run("b", 0, 0.65, 0.65, 10, True, "ap"), make_run("b", 1, 0.3, 0.3, 10, True, "ap")]
    summary = summarize_block(Block("d", "ap", True, [Group("a", {}, runs_a, "model=a"), Group("b", {}, runs_b, "model=b")]))
    assert summary.rank.max_inversions == 1 and summary.rank.mean_inversions == 1.0
    assert summary.notes == ["model=a: seeds [0] occur more than once (averaged for rank stability)"]
    assert summary.rows[0].n == 3 and summary.rows[0].test_mean == pytest.approx(1.6 / 3)


def test_holm_turns_two_raw_significant_tests_into_non_significant() -> None:
    # A 0.62 ± 0.02 is best; B and C are both 0.05 below with the same spread: each raw p = 2 (1 - F_4(t))
    # with t = 0.05 / sqrt(0.0008 / 3) (df = 4, as above), about 0.0376 < 0.05; Holm over m = 2 tests
    # gives max(2 p, p) = 2 p, about 0.075 > 0.05: neither is significant after correction.
    values = {"a": [0.60, 0.62, 0.64], "b": [0.55, 0.57, 0.59], "c": [0.55, 0.57, 0.59]}
    groups = [
        Group(m, {}, [make_run(m, s, v, v, 10, True, "ap") for s, v in enumerate(vs)], f"model={m}") for m, vs in values.items()
    ]
    summary = summarize_block(Block("d", "ap", True, groups), alpha=0.05)
    raw = 2 * (1 - t_cdf_4(0.05 / math.sqrt(0.0008 / 3)))
    assert raw == pytest.approx(0.03759, abs=1e-5)
    assert [row.label for row in summary.rows] == ["model=a", "model=b", "model=c"]
    for row in summary.rows[1:]:
        assert row.p_value == pytest.approx(raw, rel=1e-9) and row.p_holm == pytest.approx(2 * raw, rel=1e-9)
        assert not row.significant
    assert math.isnan(summary.rows[0].p_holm)


def test_folds_are_replicates_and_each_seed_is_ranked_by_its_fold_mean() -> None:
    # A: folds 0, 1 x seeds 0, 1; B likewise. Per-seed fold means: A 0.55 (seed 0), 0.40 (seed 1);
    # B 0.50, 0.45. Seed 0: A > B, seed 1: B > A -> one inversion, IGB's (reference seed 0) and all-pairs alike.
    def run(model: str, fold: int, seed: int, test: float) -> Run:
        config = {"seed": seed, "dataset": {"name": "d", "split_index": fold}, "model": {"name": model}}
        record = {"status": "completed", "config": config, "metric": "ap", "higher_is_better": True, "metrics": {"test/ap": test}}
        return Run(Path(f"runs/{model}/{fold}/{seed}"), "completed", config, RunRecord.from_dict(record))

    runs_a = [run("a", 0, 0, 0.5), run("a", 0, 1, 0.4), run("a", 1, 0, 0.6), run("a", 1, 1, 0.4)]
    runs_b = [run("b", 0, 0, 0.5), run("b", 0, 1, 0.4), run("b", 1, 0, 0.5), run("b", 1, 1, 0.5)]
    summary = summarize_block(Block("d", "ap", True, [Group("a", {}, runs_a, "model=a"), Group("b", {}, runs_b, "model=b")]))
    a = summary.rows[0]
    assert (a.label, a.n, a.n_folds, a.n_seeds) == ("model=a", 4, 2, 2)
    assert a.folds == ("split_index=0", "split_index=0", "split_index=1", "split_index=1")
    assert a.test_mean == pytest.approx(0.475) and summary.rows[1].test_mean == pytest.approx(0.475)
    assert summary.notes == []  # a seed once per fold is not a repeat
    assert (summary.rank.igb_inversions, summary.rank.mean_inversions, summary.rank.max_inversions) == (1, 1.0, 1)


def test_welch_is_undefined_for_two_constant_samples() -> None:
    """Both variances zero: t is 0/0 (equal means) or infinite; no p-value, not a spurious 0."""
    assert math.isnan(welch_p_value([0.5, 0.5, 0.5], [0.4, 0.4]))
    assert math.isnan(welch_p_value([0.5, 0.5], [0.5, 0.5]))
    assert 0.0 < welch_p_value([0.5, 0.5, 0.5], [0.4, 0.45, 0.5]) < 1.0
