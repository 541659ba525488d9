"""Tests for graphbench.report.stats: every expected value is computed by hand in the test."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from graphbench.record import RunRecord
from graphbench.report.collect import Block, Group, Run
from graphbench.report.stats import (
    count_discordant_pairs,
    mean,
    rank_stability,
    sample_std,
    summarize_block,
    welch_p_value,
)


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


def test_welch_is_undefined_for_two_constant_samples() -> None:
    """Both variances zero: t is 0/0 (equal means) or infinite; no p-value, not a spurious 0."""
    assert math.isnan(welch_p_value([0.5, 0.5, 0.5], [0.4, 0.4]))
    assert math.isnan(welch_p_value([0.5, 0.5], [0.5, 0.5]))
    assert 0.0 < welch_p_value([0.5, 0.5, 0.5], [0.4, 0.45, 0.5]) < 1.0
