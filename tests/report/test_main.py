"""End-to-end tests of ``python -m graphbench.report`` on a hand-made fake multirun directory.

Fake sweep: model=gcn,gine x seed=0,1,2 (jobs 0-5) plus two failed jobs (6, 7).

- gcn:  test/ap 0.60, 0.62, 0.64; val/ap 0.65, 0.66, 0.67; num_params 100000 (all equal)
- gine: test/ap 0.61, 0.59, 0.57; val/ap 0.63, 0.64, 0.65; num_params 99000, 99500, 99000
- both: time_per_epoch_s 3.0, 3.2, 3.4; best_epoch 10, 11, 15 (seeds 0, 1, 2)

Hand results: gcn test 0.62 ± 0.02 (ddof=1), val 0.66 ± 0.01; gine test 0.59 ± 0.02, val
0.64 ± 0.01; params mean 99166.7; time 3.20; best epoch 12.0. Welch: equal variances and
n=3 give nu = 4 and t = 0.03 / sqrt(2 * 0.0004 / 3); one test, so Holm leaves p as it is.
No folds: n = 3 (1 fold × 3 seeds). Rankings: seed 0 gine > gcn, seeds 1 and 2 gcn > gine, so
the inversion numbers are I(0,1) = 1, I(0,2) = 1, I(1,2) = 0: all-pairs mean 2/3, max 1; IGB's
(seed 0 the reference) I(0,1) + I(0,2) = 2, of at most 2 x 1.
"""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scipy import stats as scipy_stats

from graphbench.report.__main__ import main
from graphbench.report.table import format_p_value
from tests.report._runs import two_datasets, write_run

TEST_AP = {"gcn": [0.60, 0.62, 0.64], "gine": [0.61, 0.59, 0.57]}
VAL_AP = {"gcn": [0.65, 0.66, 0.67], "gine": [0.63, 0.64, 0.65]}
PARAMS = {"gcn": [100000, 100000, 100000], "gine": [99000, 99500, 99000]}


def p_value_hand() -> float:
    """Two-sided p of Welch's t-test gcn vs gine, via the closed-form t CDF with 4 df."""
    t = 0.03 / math.sqrt(2 * 0.0004 / 3)
    cdf = 0.5 + (3.0 / 8.0) * (t / math.sqrt(1 + t * t / 4)) * (1 - (t * t / (1 + t * t / 4)) / 12.0)
    return 2 * (1 - cdf)


def config(out: Path, model: str, seed: int) -> dict[str, Any]:
    return {
        "seed": seed,
        "dataset": {"name": "peptides-func"},
        "model": {"name": model, "num_layers": 5 if model == "gcn" else 8},
        "head": {"name": "mlp2"},
        "budget": {"name": "500k", "max_params": 500000},
        "trainer": {"max_epochs": 40, "default_root_dir": str(out)},
        "logger": {"wandb": {"name": f"{model}-{seed}"}},
        "paths": {"output_dir": str(out), "data_dir": "data"},
    }


def make_multirun(root: Path) -> Path:
    job = 0
    for model in ("gcn", "gine"):
        for seed in range(3):
            out = root / str(job)
            out.mkdir(parents=True)
            record = {
                "status": "completed",
                "config": config(out, model, seed),
                "num_params": PARAMS[model][seed],
                "hidden_dim": 128,
                "best_epoch": [10, 11, 15][seed],
                "epochs_trained": 40,
                "monitor": "val/ap",
                "higher_is_better": True,
                "metric": "ap",
                "metrics": {"test/ap": TEST_AP[model][seed], "val/ap": VAL_AP[model][seed], "test/loss": 0.3},
                "time_per_epoch_s": [3.0, 3.2, 3.4][seed],
                "peak_memory_mb": 812.5,
            }
            (out / "results.json").write_text(json.dumps(record))
            job += 1
    (root / "6").mkdir()
    oom = {"status": "failed: RuntimeError: CUDA out of memory", "config": config(root / "6", "gcn", 3)}
    (root / "6" / "results.json").write_text(json.dumps(oom))
    (root / "7").mkdir()
    (root / "7" / "results.json").write_text(json.dumps({"status": "failed: ValueError: bad data root"}))
    return root


def test_cli_subprocess_prints_hand_computed_table(tmp_path: Path) -> None:
    make_multirun(tmp_path / "multirun")
    proc = subprocess.run(
        [sys.executable, "-m", "graphbench.report", "multirun"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    gcn_row = "| model=gcn | 0.6200 ± 0.0200 | 0.6600 ± 0.0100 | 3 (1 × 3) | 100,000 | 3.20 | 12 | — | best |"
    gine_row = (
        f"| model=gine | 0.5900 ± 0.0200 | 0.6400 ± 0.0100 | 3 (1 × 3) | 99,166.7 (mean) | 3.20 | 12 "
        f"| {p_value_hand():.4f} | ns |"
    )
    assert f"{p_value_hand():.4f}" == "0.1401"
    lines = out.splitlines()
    assert "## dataset=peptides-func, test/ap (higher is better)" in lines
    assert "Fixed: dataset=peptides-func head=mlp2 budget=500k" in lines
    assert "mean ± sample std (ddof=1) over runs (folds × seeds)" in out and "Welch's t-test" in out
    assert "Holm-corrected over the 1 test of this table" in out and "| p vs best (Holm) |" in out
    assert lines.index(gcn_row) + 1 == lines.index(gine_row)
    failed = [
        "Failed runs (2):",
        "- multirun/6: failed: RuntimeError: CUDA out of memory [model=gcn]",
        "- multirun/7: failed: ValueError: bad data root",
    ]
    assert lines[lines.index(failed[0]) : lines.index(failed[0]) + 3] == failed
    rank = (
        "IGB's inversion number 2 (inversions against seed 0's ranking, summed over the 2 other seeds; at most 2); "
        "all-pairs inversion number mean 0.67, max 1 discordant group pairs over 3 seed pairs (at most 1 per seed pair); "
        "seeds 0, 1, 2; 2 groups."
    )
    assert lines[-1].startswith("Rank stability across seeds (Li et al., IJCAI 2022") and lines[-1].endswith(rank)
    assert "Ranks over datasets" not in out  # one dataset: no rank table
    assert lines.index(gine_row) < lines.index(failed[0]) < len(lines) - 1


def test_cli_csv_has_full_precision_rows_and_failed_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_multirun(tmp_path / "multirun")
    assert main([str(root), "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["kind"], r["config"]) for r in rows] == [
        ("group", "model=gcn"),
        ("group", "model=gine"),
        ("failed", "model=gcn"),
        ("failed", ""),
    ]
    gcn, gine = rows[0], rows[1]
    assert float(gcn["test_mean"]) == pytest.approx(0.62) and float(gcn["test_std_ddof1"]) == pytest.approx(0.02)
    assert float(gine["val_mean"]) == pytest.approx(0.64) and float(gine["val_std_ddof1"]) == pytest.approx(0.01)
    assert float(gine["num_params"]) == pytest.approx(297500 / 3)
    assert float(gine["p_value_vs_best"]) == pytest.approx(p_value_hand(), rel=1e-9)
    assert float(gine["p_value_vs_best_holm"]) == pytest.approx(p_value_hand(), rel=1e-9)
    assert (gine["n_runs"], gine["n_folds"], gine["n_seeds"], gine["seeds"]) == ("3", "1", "3", "0 1 2")
    assert (gcn["is_best"], gine["significant"], gcn["p_value_vs_best"]) == ("True", "False", "")
    assert float(gcn["rank_inversions_mean"]) == pytest.approx(2 / 3) and gcn["rank_inversions_max"] == "1"
    assert (gcn["rank_inversions_igb"], gcn["rank_reference_seed"]) == ("2", "0")
    assert rows[2]["path"] == str(root / "6") and rows[3]["status"] == "failed: ValueError: bad data root"


def test_cli_names_missing_or_empty_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "does-not-exist"
    with pytest.raises(SystemExit) as exit_info:
        main([str(missing)])
    assert exit_info.value.code == 2
    assert f"{missing}: no such directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit):
        main([str(tmp_path / "empty")])
    assert f"{tmp_path / 'empty'}: no results.json found" in capsys.readouterr().err


def test_cli_all_failed_lists_them_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "0").mkdir()
    (tmp_path / "0" / "results.json").write_text(json.dumps({"status": "failed: OSError: disk full"}))
    assert main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "No completed runs." in out and f"- {tmp_path / '0'}: failed: OSError: disk full" in out


def mutag_folds(root: Path) -> Path:
    """dataset=mutag dataset.split_index=0,1,2 seed=0,1 model=gcn,mlp as fabricated job directories.

    test/accuracy = base + 0.02 fold + 0.01 seed, base 0.80 (gcn) or 0.70 (mlp): each model's six values
    are base + 0.00, 0.01, ..., 0.05: mean base + 0.025, sample std sqrt(17.5e-4 / 5) = 0.0187.
    """
    job = 0
    for model, base in (("gcn", 0.80), ("mlp", 0.70)):
        for fold in range(3):
            for seed in range(2):
                value = base + 0.02 * fold + 0.01 * seed
                write_run(root / str(job), dataset="mutag", model=model, seed=seed, fold=fold, test=value)
                job += 1
    return root


def test_cli_pools_folds_and_seeds_into_one_row_per_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = mutag_folds(tmp_path / "multirun")
    assert main([str(root)]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines if line.startswith("| model=")]
    # Welch with equal variances 3.5e-4 and n = 6: t = 0.1 / sqrt(2 * 3.5e-4 / 6), nu = 10; one test, Holm = raw
    p_value = 2 * scipy_stats.t.sf(0.1 / math.sqrt(2 * 3.5e-4 / 6), 10)
    assert rows == [
        "| model=gcn | 0.8250 ± 0.0187 | 0.8250 ± 0.0187 | 6 (3 × 2) | 1,000 | 0.50 | 1 | — | best |",
        f"| model=mlp | 0.7250 ± 0.0187 | 0.7250 ± 0.0187 | 6 (3 × 2) | 1,000 | 0.50 | 1 | {format_p_value(p_value)} | * |",
    ]
    assert "Holm-corrected over the 1 test of this table" in "\n".join(lines)
    # seeds ranked by their fold means (gcn 0.82, 0.83; mlp 0.72, 0.73): never inverted
    assert "IGB's inversion number 0 (inversions against seed 0's ranking" in lines[-1]


def test_cli_by_fold_keeps_six_rows_with_holm_over_five_tests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = mutag_folds(tmp_path / "multirun")
    assert main([str(root), "--by-fold", "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [row["config"] for row in rows] == [
        f"dataset.split_index={fold} model={model}" for model in ("gcn", "mlp") for fold in (2, 1, 0)
    ]
    assert all((row["n_runs"], row["n_folds"], row["n_seeds"]) == ("2", "1", "2") for row in rows)
    assert rows[1]["folds"] == "split_index=1 split_index=1" and rows[1]["seeds"] == "0 1"
    raw = [float(row["p_value_vs_best"]) for row in rows[1:]]
    adjusted = [float(row["p_value_vs_best_holm"]) for row in rows[1:]]
    # Holm by hand: the further a fold lies from gcn's fold 2, the smaller its p, so the raw p-values fall
    # down the table; the i-th smallest (from the bottom, i = 0..4) is multiplied by 5 - i, then the
    # running maximum is taken
    assert raw == sorted(raw, reverse=True)
    expected, running = [], 0.0
    for i, p_value in enumerate(reversed(raw)):
        running = max(running, min(1.0, (5 - i) * p_value))
        expected.append(running)
    assert adjusted == pytest.approx(expected[::-1], rel=1e-12)
    assert adjusted[-1] == pytest.approx(5 * raw[-1], rel=1e-12) and adjusted[0] == pytest.approx(raw[0], rel=1e-12)


def test_cli_two_datasets_print_a_rank_table_and_write_the_cd_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = two_datasets(tmp_path / "multirun")
    assert main([str(root), "--plots", str(tmp_path / "plots")]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    start = lines.index("## Ranks over datasets")
    assert lines[start + 4 : start + 9] == [
        "| config | mutag | zinc | average rank |",
        "|---|---|---|---|",
        "| model=gcn | 1 | 2 | 1.50 |",
        "| model=gin | 2 | 1 | 1.50 |",
        "| model=mlp | 3 | 3 | 3.00 |",
    ]
    p_value = format_p_value(math.exp(-1.5))
    assert (
        "Friedman test (k = 3 configurations, N = 2 datasets): chi² = 3.0000, "
        f"p = {p_value}; it does not reject equal ranks at α = 0.05." in lines
    )
    assert any(line.startswith("Nemenyi critical difference (α = 0.05): CD = 2.3437; pairs") for line in lines)
    assert "Left out (not run on every dataset): model=sage." in lines
    plot = tmp_path / "plots" / "critical-difference.png"
    assert f"plot: {plot}" in captured.err and plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main([str(root), "--csv"]) == 0
    ranks = [row for row in csv.DictReader(io.StringIO(capsys.readouterr().out)) if row["kind"] == "rank"]
    assert [(row["config"], float(row["average_rank"])) for row in ranks] == [
        ("model=gcn", 1.5),
        ("model=gin", 1.5),
        ("model=mlp", 3.0),
    ]
    assert float(ranks[0]["friedman_p"]) == pytest.approx(math.exp(-1.5), rel=1e-9)


def test_cli_reference_seed_must_be_shared(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_multirun(tmp_path / "multirun")
    assert main([str(root), "--reference-seed", "2"]) == 0
    # seed 2 ranks gcn > gine: seed 0 disagrees, seed 1 agrees, so I(2,0) + I(2,1) = 1 + 0
    assert "IGB's inversion number 1 (inversions against seed 2's ranking" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main([str(root), "--reference-seed", "7"])
    assert "--reference-seed: reference seed 7 is not a seed every group has; valid: [0, 1, 2]" in capsys.readouterr().err
