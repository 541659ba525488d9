"""The real CLI, run as a user runs it (``python run.py ...``, forked from a warm interpreter:
tests/warm_python.py), on fast settings."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import FAST_CYCLES, real_data_root
from tests.paths import REPO
from tests.warm_python import run_python


def cli_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a CLI run in tests: W&B offline, Hydra's short errors, no data root from
    the caller's environment."""
    full_env = {**os.environ, "WANDB_MODE": "offline", "HYDRA_FULL_ERROR": "0", **(env or {})}
    full_env.pop("GRAPHBENCH_DATA", None)
    return full_env


def run_cli(args: list[str], tmp_path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python run.py <flags> paths.cache_dir=<tmp_path>/cache <overrides>`` in the repository, its
    output captured (tests/warm_python.py)."""
    full_env = cli_env(env)
    flags = [a for a in args if a.startswith("-") and not a.startswith("++")]
    overrides = [a for a in args if a not in flags]
    return run_python(["run.py", *flags, f"paths.cache_dir={tmp_path / 'cache'}", *overrides], REPO, full_env)


def test_default_experiment_runs_and_writes_results(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = run_cli([*FAST_CYCLES, f"hydra.run.dir={run_dir}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "test: test/accuracy" in proc.stdout
    results = json.loads((run_dir / "results.json").read_text())
    assert results["status"] == "completed"
    assert set(results) >= {"config", "num_params", "best_epoch", "metrics", "time_per_epoch_s", "peak_memory_mb", "status"}
    assert {"train/accuracy", "val/accuracy", "test/accuracy", "test/loss"} <= set(results["metrics"])
    assert results["config"]["dataset"]["name"] == "cycles"
    # provenance (schema 3): this checkout's commit, the overrides run.py got, no raw files (generated data)
    provenance = results["provenance"]
    assert results["schema_version"] == 3 and provenance["raw_files"] == {}
    assert provenance["overrides"] == [f"paths.cache_dir={tmp_path / 'cache'}", *FAST_CYCLES]
    assert provenance["started_at"] < provenance["ended_at"] and provenance["packages"]["torch"] is not None
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False)
    if head.returncode == 0:  # run from a checkout (not from an unpacked archive)
        assert provenance["code"]["commit"] == head.stdout.strip() and isinstance(provenance["code"]["dirty"], bool)
    predictions = np.load(run_dir / "predictions.npz")
    # row-aligned with the dataset's test indices (the cycles test split is the last 32 graphs)
    assert predictions["index"].tolist() == list(range(128, 160))
    assert predictions["y_pred"].shape == predictions["y_true"].shape == (32, 1)
    accuracy = ((predictions["y_pred"] > 0) == predictions["y_true"]).mean()
    assert accuracy == pytest.approx(results["metrics"]["test/accuracy"], abs=1e-6)
    assert (run_dir / "csv" / "metrics.csv").exists()


def test_multirun_writes_one_results_json_per_job(tmp_path: Path) -> None:
    sweep_dir = tmp_path / "sweep"
    proc = run_cli(["-m", *FAST_CYCLES, "trainer.max_epochs=1", "model=gcn,mlp", f"hydra.sweep.dir={sweep_dir}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for job in ("0", "1"):
        assert json.loads((sweep_dir / job / "results.json").read_text())["status"] == "completed"


def test_help_lists_groups_and_options(tmp_path: Path) -> None:
    proc = run_cli(["--help"], tmp_path)
    assert proc.returncode == 0
    for expected in (
        "dataset:",
        "cycles",
        "peptides-func",
        "model:",
        "gatedgcn",
        "head: dot, linear, mlp2, mlp3",
        "budget: 100k, 500k, none",
        "hydra/launcher: basic, joblib, submitit_local, submitit_slurm",  # Hydra's groups too
        "hydra/sweeper: basic, optuna",
    ):
        assert expected in proc.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["model=transformer9000"], "error: model=transformer9000: no such model; the options: appnp, gat, gatedgcn, "),
        (["seed=abc"], "seed='abc' must be an integer"),
        (["trainer.max_epochs=ten"], "trainer.max_epochs='ten' must be an integer"),
        # the schemas (graphbench.config.schema): a wrong value or key of a node, before anything is built
        (["model.hidden_dim=0"], "error: invalid config: model.hidden_dim=0 must be a positive integer"),
        (["+model.hiden_dim=8"], "error: invalid config: model.hiden_dim is not a key of model (did you mean model.hidden_dim?)"),
        # a class names its own argument, the builder puts the config path in front
        (["dataset.pad_to=xyz"], "error: dataset.pad_to='xyz' is not one of ['none', 'buckets']"),
        (["dataset.num_workers=-1"], "error: dataset.num_workers must be a non-negative integer, got -1"),
        (["++sampler.eval=mini"], "error: sampler.eval='mini' is not one of ['full', 'sampled']"),
        (["model=gcnii", "model.layer.num_convs=0"], "error: model.layer.num_convs=0 must be >= 1"),
        (
            ["+head.dropout_first=true", "+head.l2_normalize=true"],
            "error: head.dropout_first=true and l2_normalize=true are two heads' orders: set one of them",
        ),
        (["budget.max_params=10"], "error: budget.max_params=10 is below the "),
        (["model=grand"], "error: model.encode_inputs=false needs dense node features, no pe_encoder and at least one layer"),
        (
            ["model=grand", "model.encode_inputs=true"],
            "error: model.consistency (GRAND's consistency regularization) needs a multiclass task; dataset 'cycles' is "
            "binary: set model.consistency=null",
        ),
    ],
)
def test_bad_input_gives_one_clear_message(tmp_path: Path, args: list[str], expected: str) -> None:
    proc = run_cli([*FAST_CYCLES, *args, f"hydra.run.dir={tmp_path / 'run'}"], tmp_path)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and expected in errors[0], proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr


def test_a_source_argument_is_named_by_its_dataset_key(tmp_path: Path) -> None:
    """The source names its argument (homophily=0.4); the dataset's builder adds ``dataset.``."""
    proc = run_cli(["dataset=syn-cora", "dataset.homophily=0.4", f"hydra.run.dir={tmp_path / 'run'}"], tmp_path)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    expected = "error: dataset.homophily=0.4 is not a syn-cora graph; valid: 0.0, 0.3, 0.5, 0.7, 1.0"
    assert len(errors) == 1 and expected in errors[0], proc.stderr[-3000:]


def test_missing_data_root_names_files_and_writes_no_cache(tmp_path: Path) -> None:
    proc = run_cli(
        [
            "dataset=peptides-func",
            f"paths.data_dir={tmp_path / 'nowhere'}",
            "dataset.download=false",
            f"hydra.run.dir={tmp_path / 'run'}",
        ],
        tmp_path,
    )
    assert proc.returncode == 1
    output = proc.stdout + proc.stderr  # the files listed once, in the log; the error line names the log
    assert "peptide_multi_class_dataset.csv.gz" in output and "splits_random_stratified_peptide.pickle" in output
    assert output.count("Put the official files there") == 1 and len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr
    assert not list((tmp_path / "cache").glob("*.pt")) if (tmp_path / "cache").exists() else True


def test_corrupted_raw_file_is_rejected_without_cache(tmp_path: Path) -> None:
    root = tmp_path / "data"
    (root / "peptides-functional" / "raw").mkdir(parents=True)
    (root / "peptides-functional" / "raw" / "peptide_multi_class_dataset.csv.gz").write_bytes(b"not the official file")
    (root / "peptides-functional" / "splits_random_stratified_peptide.pickle").write_bytes(b"nor this")
    proc = run_cli(
        ["dataset=peptides-func", f"paths.data_dir={root}", "dataset.download=false", f"hydra.run.dir={tmp_path / 'run'}"],
        tmp_path,
    )
    assert proc.returncode == 1
    assert "corrupted or not the official file" in proc.stderr and "MD5" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").glob("*.pt"))


def test_multirun_report_groups_seeds_and_names_groups_by_overrides(tmp_path: Path) -> None:
    """The report aggregates a real model x seed sweep over seeds; W&B names follow the overrides."""
    sweep_dir = tmp_path / "sweep"
    proc = run_cli(
        ["-m", *FAST_CYCLES, "trainer.max_epochs=1", "model=gcn,mlp", "seed=0,1", f"hydra.sweep.dir={sweep_dir}"], tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = [json.loads(path.read_text()) for path in sorted(sweep_dir.glob("*/results.json"))]
    assert len(records) == 4
    config = {(r["config"]["model"]["name"], r["config"]["seed"]): r["config"] for r in records}
    assert sorted(config) == [("gcn", 0), ("gcn", 1), ("mlp", 0), ("mlp", 1)]
    for (model, seed), cfg in config.items():
        assert cfg["run_group"].startswith(f"model={model},dataset.batch_size=32,")
        assert "seed" not in cfg["run_group"] and "cache_dir" not in cfg["run_group"]
        assert cfg["run_name"] == f"{cfg['run_group']},seed={seed}"
    assert config["gcn", 0]["run_group"] == config["gcn", 1]["run_group"] != config["mlp", 0]["run_group"]
    assert config["mlp", 0]["run_group"] == config["mlp", 1]["run_group"]
    assert config["gcn", 0]["run_name"] != config["gcn", 1]["run_name"]
    # resolved inside the Hydra job (paths.output_dir is ${hydra:runtime.output_dir}): only the seed and its name vary
    assert all(r["replicate_keys"] == ["run_name", "seed"] for r in records)

    report = run_python(["-m", "graphbench.report", str(sweep_dir)], REPO, os.environ, timeout=120)
    assert report.returncode == 0, report.stderr
    rows = [line.split(" | ") for line in report.stdout.splitlines() if line.startswith("| model=")]
    assert sorted((row[0], row[3]) for row in rows) == [("| model=gcn", "2 (1 × 2)"), ("| model=mlp", "2 (1 × 2)")]
    (fixed,) = [line.split() for line in report.stdout.splitlines() if line.startswith("Fixed:")]
    assert {"dataset=cycles", "head=mlp2"} <= set(fixed) and not any(word.startswith("model=") for word in fixed)
    assert "over 1 seed pair (at most 1 per seed pair); seeds 0, 1; 2 groups" in report.stdout
    assert "not computed" not in report.stdout


def test_truncated_cache_is_moved_aside_and_rebuilt(tmp_path: Path) -> None:
    """A corrupt cache entry fails no run: it is named, kept aside and rebuilt."""
    args = [*FAST_CYCLES, "trainer.max_epochs=1"]
    assert run_cli([*args, f"hydra.run.dir={tmp_path / 'run'}"], tmp_path).returncode == 0
    (entry,) = (tmp_path / "cache").glob("cycles-*.pt")
    truncated = entry.read_bytes()[:1000]
    entry.write_bytes(truncated)
    proc = run_cli([*args, f"hydra.run.dir={tmp_path / 'rerun'}"], tmp_path)  # a run directory holds one run
    assert proc.returncode == 0, proc.stderr[-3000:]
    output = proc.stdout + proc.stderr
    (moved,) = (tmp_path / "cache").glob(f"{entry.name}.corrupt-*")
    assert (
        f"cache file {entry} cannot be read (RuntimeError: PytorchStreamReader failed reading zip archive: "
        f"failed finding central directory); moved it to {moved.name} and rebuilding it"
    ) in output
    num_graphs = sum(
        int(a.split("=")[1])
        for a in FAST_CYCLES
        if a.split("=")[0] in ("dataset.num_train", "dataset.num_val", "dataset.num_test")
    )
    assert f"processing cycles ({num_graphs:,} graphs): building the processed cache {entry} ..." in output
    assert moved.read_bytes() == truncated
    assert "Traceback" not in output
    assert json.loads((tmp_path / "run" / "results.json").read_text())["status"] == "completed"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            [*FAST_CYCLES, "paths.cache_dir={tmp}/afile/cache"],
            (
                "paths.cache_dir={tmp}/afile/cache cannot be used: Not a directory "
                "(it must be a directory graphbench can create and write); set paths.cache_dir=<a writable directory>"
            ),
        ),
        (
            ["dataset=texas", "trainer.max_epochs=1", "trainer.enable_progress_bar=false", "paths.data_dir={tmp}/afile"],
            ("paths.data_dir={tmp}/afile is a file: set paths.data_dir=<the folder holding the raw datasets>"),
        ),
    ],
    ids=["cache_dir-not-writable", "data_dir-is-a-file"],
)
def test_unusable_data_and_cache_dirs_give_one_line(tmp_path: Path, args: list[str], expected: str) -> None:
    """A cache dir that cannot be written (a path under a file stops even root) and a data
    root that is a file each end with one `error:` line, not a traceback or a list of downloads."""
    (tmp_path / "afile").write_text("not a directory")
    proc = run_cli([*(a.format(tmp=tmp_path) for a in args), f"hydra.run.dir={tmp_path / 'run'}"], tmp_path)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and expected.format(tmp=tmp_path) in errors[0], proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "download" not in proc.stderr


@pytest.mark.real_data
def test_a_warm_cache_does_not_hide_an_empty_data_dir(tmp_path: Path) -> None:
    """After one texas run, a data root without its raw files fails in one `error:` line: every run checks
    the raw files its cache was built from, a warm cache included."""
    real_data_root()
    args = ["dataset=texas", "trainer.max_epochs=1", "trainer.enable_progress_bar=false"]
    warm = run_cli([*args, f"hydra.run.dir={tmp_path / 'warm'}"], tmp_path)
    assert warm.returncode == 0, warm.stderr[-3000:]
    raw_files = json.loads((tmp_path / "warm" / "results.json").read_text())["provenance"]["raw_files"]
    assert len(raw_files) == 12 and all(path.startswith("WebKB/texas/") and len(md5) == 32 for path, md5 in raw_files.items())
    (tmp_path / "empty").mkdir()
    proc = run_cli([*args, f"paths.data_dir={tmp_path / 'empty'}", f"hydra.run.dir={tmp_path / 'run'}"], tmp_path)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    expected = f"Raw files of texas not found under data root {tmp_path / 'empty'} (none of its 12 files is there):"
    assert len(errors) == 1 and expected in errors[0], proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    # the console (and the run's log) also lists the missing files one a line, under the same header
    listed = [line for line in proc.stdout.splitlines() if line.startswith(f"  - {tmp_path / 'empty' / 'WebKB' / 'texas'}")]
    assert len(listed) == 12, proc.stdout[-3000:]
    assert (proc.stdout + proc.stderr).count(str(tmp_path / "empty" / "WebKB" / "texas")) == 12  # the list once
