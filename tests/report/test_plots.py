"""Tests for graphbench.report.plots and ``python -m graphbench.report --plots``.

Fake multirun (hand-made ``results.json`` + Lightning-style ``csv/metrics.csv``), metric accuracy:

- gcn seed 0: val [0.5, 0.7], train/loss [1.0, 0.8], test 0.6
- gcn seed 1: val [0.7, 0.9], train/loss [0.6, 0.4], test 0.8
  -> val mean [0.6, 0.8], std [sqrt(0.02), sqrt(0.02)]; loss mean [0.8, 0.6], std [sqrt(0.08)] * 2
- mlp seed 0: val [0.4, 0.5, 0.6], train/loss [0.9, 0.8, 0.7], test 0.5 (three epochs)
- mlp seed 1: val [0.6, 0.7], train/loss [0.7, 0.6], test 0.7 (two epochs: stopped early)
- mlp seed 2: no csv/metrics.csv, test 0.6
  -> val mean [0.5, 0.6, 0.6], std [sqrt(0.02), sqrt(0.02), NaN], n [2, 2, 1], all runs until epoch 1
"""

from __future__ import annotations

import json
import logging
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from matplotlib.image import imread

from graphbench.report.__main__ import main
from graphbench.report.collect import Block, collect
from graphbench.report.plots import (
    Curve,
    aggregate,
    curves_figure,
    jitter_offsets,
    learning_curves,
    read_epoch_series,
    slugify,
    write_plots,
)
from graphbench.report.stats import summarize_block
from tests.paths import REPO

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SQRT_002, SQRT_008 = math.sqrt(0.02), math.sqrt(0.08)
SLUG = "dataset-cycles-test-accuracy-higher-is-better"
HEADER = "epoch,step,test/accuracy,test/loss,train/accuracy,train/loss,val/accuracy,val/accuracy_best,val/loss"


def write_metrics_csv(run_dir: Path, val: list[float], loss: list[float], test: float) -> None:
    """Rows as Lightning's CSVLogger writes them: per epoch a validation row and a training row, then the test row."""
    lines = [HEADER]
    for epoch, (val_value, loss_value) in enumerate(zip(val, loss)):
        step = 3 * epoch + 2
        lines += [f"{epoch},{step},,,,,{val_value},{val_value},0.69", f"{epoch},{step},,,0.5,{loss_value},,,"]
    lines.append(f"{len(val)},{3 * len(val)},{test},0.68,,,,,")
    (run_dir / "csv").mkdir(parents=True)
    (run_dir / "csv" / "metrics.csv").write_text("\n".join(lines) + "\n")


def write_run(run_dir: Path, model: str, seed: int, test: float, curves: tuple[list[float], list[float]] | None) -> None:
    run_dir.mkdir(parents=True)
    config: dict[str, Any] = {
        "seed": seed,
        "dataset": {"name": "cycles"},
        "model": {"name": model},
        "head": {"name": "mlp2"},
        "paths": {"output_dir": str(run_dir)},
    }
    record = {
        "status": "completed",
        "config": config,
        "metric": "accuracy",
        "higher_is_better": True,
        "metrics": {"test/accuracy": test, "val/accuracy": test},
    }
    (run_dir / "results.json").write_text(json.dumps(record))
    if curves is not None:
        write_metrics_csv(run_dir, *curves, test=test)


def make_multirun(root: Path) -> Path:
    write_run(root / "0", "gcn", 0, 0.6, ([0.5, 0.7], [1.0, 0.8]))
    write_run(root / "1", "gcn", 1, 0.8, ([0.7, 0.9], [0.6, 0.4]))
    write_run(root / "2", "mlp", 0, 0.5, ([0.4, 0.5, 0.6], [0.9, 0.8, 0.7]))
    write_run(root / "3", "mlp", 1, 0.7, ([0.6, 0.7], [0.7, 0.6]))
    write_run(root / "4", "mlp", 2, 0.6, None)
    return root


def only_block(root: Path) -> Block:
    (block,) = collect([root]).blocks
    return block


def assert_curve(curve: Curve, epochs: list[int], mean: list[float], std: list[float], n: list[int]) -> None:
    assert curve.epochs == tuple(epochs) and curve.n == tuple(n)
    assert curve.mean == pytest.approx(mean, rel=1e-12)
    assert [math.isnan(s) for s in curve.std] == [math.isnan(s) for s in std]
    assert [s for s in curve.std if not math.isnan(s)] == pytest.approx([s for s in std if not math.isnan(s)], rel=1e-12)


def test_read_epoch_series_merges_training_validation_and_test_rows(tmp_path: Path) -> None:
    write_metrics_csv(tmp_path, [0.5, 0.7], [1.0, 0.8], test=0.6)
    series = read_epoch_series(tmp_path / "csv" / "metrics.csv", ("val/accuracy", "train/loss", "test/accuracy", "lr"))
    assert series == {
        "val/accuracy": {0: 0.5, 1: 0.7},
        "train/loss": {0: 1.0, 1: 0.8},
        "test/accuracy": {2: 0.6},
        "lr": {},
    }


def test_aggregate_is_over_the_runs_that_logged_each_epoch() -> None:
    curve = aggregate([{0: 1.0, 1: 2.0, 2: 3.0}, {0: 3.0, 1: 4.0}])
    assert_curve(curve, [0, 1, 2], [2.0, 3.0, 3.0], [SQRT_002 * 10, SQRT_002 * 10, math.nan], [2, 2, 1])
    assert curve.full_until == 1
    assert aggregate([{0: 1.0}, {0: 2.0}]).full_until == 0 and aggregate([]).full_until is None


def test_learning_curves_mean_and_sample_std_over_seeds(tmp_path: Path) -> None:
    root = make_multirun(tmp_path / "multirun")
    curves = learning_curves(only_block(root))
    assert list(curves) == ["model=gcn", "model=mlp"]
    gcn, mlp = curves["model=gcn"], curves["model=mlp"]
    assert (gcn.metric, gcn.n_runs, gcn.missing) == ("accuracy", 2, ())
    assert_curve(gcn.val, [0, 1], [0.6, 0.8], [SQRT_002, SQRT_002], [2, 2])
    assert_curve(gcn.train_loss, [0, 1], [0.8, 0.6], [SQRT_008, SQRT_008], [2, 2])
    assert (mlp.n_runs, mlp.missing) == (2, (root / "4",))
    assert_curve(mlp.val, [0, 1, 2], [0.5, 0.6, 0.6], [SQRT_002, SQRT_002, math.nan], [2, 2, 1])
    assert_curve(mlp.train_loss, [0, 1, 2], [0.8, 0.7, 0.7], [SQRT_002, SQRT_002, math.nan], [2, 2, 1])
    assert mlp.val.full_until == 1


def test_jitter_is_deterministic_and_even() -> None:
    assert jitter_offsets(0) == [] and jitter_offsets(1) == [0.0]
    assert jitter_offsets(3) == pytest.approx([-0.15, 0.0, 0.15], abs=1e-15)
    assert jitter_offsets(5, width=0.4) == pytest.approx([-0.2, -0.1, 0.0, 0.1, 0.2], abs=1e-15)


def test_slugify_block_title() -> None:
    assert slugify("dataset=peptides-func, test/ap (higher is better)") == "dataset-peptides-func-test-ap-higher-is-better"
    assert slugify("=/=") == "block"


def assert_png(path: Path, shape: tuple[int, int, int]) -> None:
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    assert imread(path).shape == shape


def test_write_plots_writes_curves_and_strip_png_per_block(tmp_path: Path) -> None:
    root = make_multirun(tmp_path / "multirun")
    summary = summarize_block(only_block(root))
    paths = write_plots([summary], tmp_path / "plots")
    assert paths == [tmp_path / "plots" / f"{SLUG}-curves.png", tmp_path / "plots" / f"{SLUG}-test.png"]
    assert_png(paths[0], (480, 1200, 4))  # 12 x 4.8 in at 100 dpi
    assert_png(paths[1], (260, 800, 4))  # 8 x (1.6 + 0.5 * 2 groups) in


def test_one_epoch_curves_have_one_integer_tick_at_that_epoch(tmp_path: Path) -> None:
    write_run(tmp_path / "runs" / "0", "gcn", 0, 0.6, ([0.5], [1.0]))
    write_run(tmp_path / "runs" / "1", "gcn", 1, 0.8, ([0.7], [0.6]))
    summary = summarize_block(only_block(tmp_path / "runs"))
    figure = curves_figure(summary, learning_curves(summary.block))
    figure.canvas.draw()
    for axes in figure.axes[:2]:
        assert list(axes.get_xticks()) == [0] and axes.get_xlim() == (-0.5, 0.5)


def test_write_plots_without_logs_writes_only_the_strip_plot(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    write_run(tmp_path / "runs" / "0", "gcn", 0, 0.6, None)
    write_run(tmp_path / "runs" / "1", "gcn", 1, 0.8, None)
    summary = summarize_block(only_block(tmp_path / "runs"))
    with caplog.at_level(logging.WARNING, logger="graphbench.report.plots"):
        paths = write_plots([summary, summary], tmp_path / "plots")
    assert [path.name for path in paths] == [f"{SLUG}-test.png", f"{SLUG}-2-test.png"]
    assert_png(paths[0], (210, 800, 4))
    assert "no run has a readable csv/metrics.csv" in caplog.text


def test_cli_plots_prints_paths_and_keeps_stdout_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_multirun(tmp_path / "multirun")
    out = tmp_path / "plots"
    assert main([str(root), "--plots", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("## dataset=cycles, test/accuracy (higher is better)") and "plot:" not in captured.out
    assert captured.err.splitlines() == [f"plot: {out / f'{SLUG}-curves.png'}", f"plot: {out / f'{SLUG}-test.png'}"]
    assert sorted(path.name for path in out.iterdir()) == [f"{SLUG}-curves.png", f"{SLUG}-test.png"]


def test_cli_wandb_project_needs_plots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_multirun(tmp_path / "multirun")
    with pytest.raises(SystemExit) as exit_info:
        main([str(root), "--wandb-project", "graphbench"])
    assert exit_info.value.code == 2
    assert "--wandb-project logs the plots: add --plots OUT_DIR" in capsys.readouterr().err


def test_cli_logs_plots_to_an_offline_wandb_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "wandb-dir"))
    monkeypatch.setenv("WANDB_SILENT", "true")
    (tmp_path / "wandb-dir").mkdir()
    root = make_multirun(tmp_path / "multirun")
    assert main([str(root), "--plots", str(tmp_path / "plots"), "--wandb-project", "graphbench-test"]) == 0
    assert "warning" not in capsys.readouterr().err
    (run_dir,) = (tmp_path / "wandb-dir" / "wandb").glob("offline-run-*")
    images = sorted(path.name.split("_")[0] for path in (run_dir / "files" / "media" / "images").glob("*.png"))
    assert images == [f"{SLUG}-curves", f"{SLUG}-test"]


def test_cli_wandb_failure_is_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import wandb

    def refuse(**kwargs: Any) -> None:
        raise RuntimeError("api_key not configured (no-tty)\ncall wandb.login(key=[your_api_key])")

    monkeypatch.setattr(wandb, "init", refuse)
    root = make_multirun(tmp_path / "multirun")
    out = tmp_path / "plots"
    assert main([str(root), "--plots", str(out), "--wandb-project", "graphbench"]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning")]
    assert warnings == [f"warning: W&B logging failed (RuntimeError: api_key not configured (no-tty)); the plots are in {out}"]


def run_python(args: list[str]) -> subprocess.CompletedProcess[str]:
    """``python <args>`` in the repository root, W&B offline, output captured."""
    env = {**os.environ, "WANDB_MODE": "offline", "HYDRA_FULL_ERROR": "0"}
    env.pop("GRAPHBENCH_DATA", None)
    return subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.slow
def test_real_multirun_report_plots(tmp_path: Path) -> None:
    """Two models x two seeds of the real training CLI on fast settings (~15 s), then the report with plots."""
    sweep = tmp_path / "sweep"
    train = run_python(
        [
            *("run.py", "-m", "model=gcn,mlp", "seed=0,1", "logger=csv", f"hydra.sweep.dir={sweep}"),
            *("dataset.num_train=96", "dataset.num_val=32", "dataset.num_test=32", "dataset.batch_size=32"),
            *("model.hidden_dim=16", "model.num_layers=2", "trainer.max_epochs=3", "trainer.enable_progress_bar=false"),
            f"paths.cache_dir={tmp_path / 'cache'}",
        ]
    )
    assert train.returncode == 0, train.stderr[-3000:]
    report = run_python(["-m", "graphbench.report", str(sweep), "--plots", str(tmp_path / "plots")])
    assert report.returncode == 0, report.stderr[-3000:]
    (block,) = collect([sweep]).blocks
    curves = learning_curves(block)
    assert sorted(curves) == ["model=gcn", "model=mlp"]
    for stats in curves.values():
        assert (stats.n_runs, stats.missing, stats.val.epochs, stats.val.n) == (2, (), (0, 1, 2), (2, 2, 2))
        assert stats.train_loss.epochs == (0, 1, 2) and all(math.isfinite(s) for s in stats.train_loss.std)
    for name in (f"{SLUG}-curves.png", f"{SLUG}-test.png"):
        assert f"plot: {tmp_path / 'plots' / name}" in report.stderr
        assert (tmp_path / "plots" / name).read_bytes()[:8] == PNG_SIGNATURE
