"""graphbench.run.cli: the lines ``run.py`` prints when a run ends (format_summary, end_line)."""

from __future__ import annotations

from graphbench.run.cli import canonical_name, end_line, format_summary, installed_version_text, program_name, version_text
from graphbench.run.record import COMPLETED, INTERRUPTED, PREEMPTED, RunRecord


def test_training_summary_lists_each_split_and_other_metrics() -> None:
    record = RunRecord(
        status=COMPLETED,
        config={},
        run_dir="outputs/run",
        num_params=1234,
        hidden_dim=16,
        best_epoch=3,
        epochs_trained=5,
        metrics={
            "train/loss": 0.5,
            "val/accuracy": 0.75,
            "test/accuracy": 0.625,
            "test/loss": None,
            "ntk/kernel_target_alignment": 0.25,
        },
        time_per_epoch_s=0.125,
        peak_memory_mb=700.4,
    )
    assert format_summary(record) == (
        "status: completed\n"
        "parameters: 1,234 (hidden_dim=16)\n"
        "best epoch: 3 of 5\n"
        "metrics: ntk/kernel_target_alignment = 0.2500\n"
        "train: train/loss = 0.5000\n"
        "val: val/accuracy = 0.7500\n"
        "test: test/accuracy = 0.6250, test/loss = n/a\n"
        "time per epoch: 0.12 s, peak memory: 700 MiB\n"
        "run directory: outputs/run"
    )


def test_memorization_summary_prints_no_empty_train_line() -> None:
    """``task=memorization`` records val/ and test/ accuracies of its models but no train/ metric."""
    record = RunRecord(
        status=COMPLETED,
        config={},
        run_dir="outputs/mem",
        num_params=99,
        hidden_dim=8,
        metrics={
            "memorization/rate": 0.5,
            "lds/candidate_memorized": None,
            "val/accuracy_f": 0.25,
            "test/accuracy_f": 0.75,
            "test/accuracy_g": 0.5,
        },
    )
    assert format_summary(record) == (
        "status: completed\n"
        "parameters: 99 (hidden_dim=8)\n"
        "metrics: lds/candidate_memorized = n/a, memorization/rate = 0.5000\n"
        "val: val/accuracy_f = 0.2500\n"
        "test: test/accuracy_f = 0.7500, test/accuracy_g = 0.5000\n"
        "run directory: outputs/mem"
    )


def test_a_run_that_did_not_complete_shows_only_its_status_and_directory() -> None:
    record = RunRecord(status="failed: boom", config={}, run_dir="outputs/x", metrics={"val/accuracy": 0.5})
    assert format_summary(record) == "status: failed: boom\nrun directory: outputs/x"


def test_the_usage_line_names_the_console_script_or_the_module() -> None:
    assert program_name("graphbench.report", "graphbench-report", "/venv/bin/graphbench-report") == "graphbench-report"
    assert program_name("graphbench.report", "graphbench-report", "/repo/src/graphbench/report/__main__.py") == (
        "python -m graphbench.report"
    )


def test_a_failed_run_ends_with_one_error_line_without_the_status_prefix() -> None:
    failed = RunRecord(status="failed: invalid config: seed=1.5 must be an integer", config={}, run_dir="outputs/x")
    assert (
        end_line(failed, "hydra.run.dir=outputs/x")
        == "error: invalid config: seed=1.5 must be an integer (run directory: outputs/x)"
    )
    diverged = RunRecord(status="diverged at epoch 3", config={}, run_dir="outputs/x")
    assert end_line(diverged) == "error: diverged at epoch 3 (run directory: outputs/x)"


def test_a_stopped_run_says_what_stopped_it_and_how_to_continue_it() -> None:
    interrupted = RunRecord(status=INTERRUPTED, config={}, run_dir="outputs/x")
    assert end_line(interrupted, "hydra.run.dir=outputs/x") == (
        "interrupted (Ctrl-C); run directory: outputs/x; to continue it, run the same command with resume=auto hydra.run.dir=outputs/x"
    )
    preempted = RunRecord(status=PREEMPTED, config={}, run_dir="multirun/d/t/0")
    assert end_line(preempted, "hydra.sweep.dir=multirun/d/t") == (
        "preempted (SIGTERM); run directory: multirun/d/t/0; to continue it, run the same command with resume=auto "
        "hydra.sweep.dir=multirun/d/t"
    )
    assert end_line(interrupted) == "interrupted (Ctrl-C); run directory: outputs/x"


def test_version_names_the_distribution_its_version_and_where_the_module_is() -> None:
    assert version_text("graphbench-gnn", "0.1.0", "/venv/lib/site-packages/graphbench") == (
        "graphbench-gnn 0.1.0: graphbench from /venv/lib/site-packages/graphbench"
    )
    assert version_text("graphbench-gnn", None, "/repo/src/graphbench") == (
        "graphbench from /repo/src/graphbench (graphbench-gnn is not installed: a checkout on the module path)"
    )
    clash = version_text("graphbench-gnn", "0.1.0", "/venv/graphbench", [("graphbench-lib", "0.2.0")])
    assert clash.splitlines()[1] == (
        "warning: graphbench-lib 0.2.0 is installed too and also provides a module named graphbench, so one overwrites "
        "the other's files; keep one per environment (pip uninstall graphbench-lib)"
    )


def test_this_environments_version_is_the_installed_graphbench_gnn() -> None:
    assert canonical_name("Graphbench_GNN") == canonical_name("graphbench.gnn") == "graphbench-gnn"
    assert installed_version_text("/somewhere/graphbench") == "graphbench-gnn 0.1.0: graphbench from /somewhere/graphbench"
