"""Cells to multirun commands: the exact commands, run directories by seed and fold, missing data, launchers."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from graphbench.reproduce.plan import Options, auto_jobs, data_root, launcher_overrides, plan_table
from graphbench.reproduce.spec import load_spec
from tests.paths import CONF


def options(tmp_path: Path, **changes: object) -> Options:
    base = {"seeds": 3, "fast": False, "jobs": 1, "launcher": None, "out": tmp_path / "out", "extra": ()}
    return Options(**{**base, **changes})  # type: ignore[arg-type]


def data(tmp_path: Path, *paths: str) -> Path:
    root = tmp_path / "data"
    for path in paths:
        (root / path).mkdir(parents=True, exist_ok=True)
    return root


def test_kipf_welling_plans_one_multirun_per_dataset_with_run_directories_named_by_seed(tmp_path: Path) -> None:
    root = data(tmp_path, "Planetoid/Cora/raw", "Planetoid/CiteSeer/raw")
    plan = plan_table(load_spec("kipf-welling-2017", CONF), options(tmp_path), root)
    out = tmp_path / "out" / "kipf-welling-2017"
    assert plan.table_dir == out
    assert [cell.shown for cell in plan.cells] == [
        f"graphbench -m experiment=planetoid/cora-gcn seed=0,1,2 resume=auto hydra.sweep.dir={out}/cora-gcn "
        "'hydra.sweep.subdir=seed${seed}'",
        f"graphbench -m experiment=planetoid/cora-gcn dataset=citeseer seed=0,1,2 resume=auto "
        f"hydra.sweep.dir={out}/citeseer-gcn 'hydra.sweep.subdir=seed${{seed}}'",
    ]
    assert [slot.path for slot in plan.cells[1].runs] == [out / "citeseer-gcn" / f"seed{s}" for s in range(3)]
    assert plan.runs == 6 and plan.estimated_minutes(gpu=False) == pytest.approx(2.4) and plan.estimated_minutes(gpu=True) == 3.0
    assert plan.estimated_minutes(gpu=False, runs_of=lambda cell: 1 if cell is plan.cells[0] else 0) == pytest.approx(0.4)
    assert plan.cells[0].argv()[1:3] == ["-m", "experiment=planetoid/cora-gcn"]


def test_folds_are_a_second_axis_and_fast_keeps_one_seed_and_the_first_fold(tmp_path: Path) -> None:
    root = data(tmp_path, "TUDataset/MUTAG/raw")
    spec = load_spec("gin-mutag", CONF)
    full = plan_table(spec, options(tmp_path, seeds=2), root)
    assert len(full.cells) == 3 and full.runs == 3 * 10 * 2
    assert "dataset.split_index=0,1,2,3,4,5,6,7,8,9" in full.cells[0].overrides
    assert "hydra.sweep.subdir=fold${dataset.split_index}-seed${seed}" in full.cells[0].overrides
    assert full.cells[0].runs[3].path.name == "fold1-seed1"
    fast = plan_table(spec, options(tmp_path, fast=True, extra=("paths.data_dir=/d",)), root)
    assert fast.table_dir == tmp_path / "out" / "gin-mutag-fast"
    assert fast.cells[0].overrides[:5] == (
        "experiment=gin-mutag/gin0",
        "trainer.max_epochs=2",
        "paths.data_dir=/d",
        "seed=0",
        "dataset.split_index=0",
    )
    assert [slot.path.name for slot in fast.cells[0].runs] == ["fold0-seed0"]


def test_cells_with_the_same_overrides_share_the_first_ones_runs_and_count_once(tmp_path: Path) -> None:
    root = data(tmp_path, *(f"syn-cora/h{h}-r1.npz" for h in ("0.00", "0.30", "0.50", "0.70", "1.00")))
    plan = plan_table(load_spec("ncmemo-table5", CONF), options(tmp_path), root)
    out = tmp_path / "out" / "ncmemo-table5"
    rate, score = plan.cells[0], plan.cells[1]
    assert (rate.cell.column, score.cell.column) == ("GCN MR", "GCN score")
    assert rate.sweep_dir == score.sweep_dir == out / "h-0.0-gcn-mr" and rate.overrides == score.overrides
    assert len({cell.sweep_dir for cell in plan.cells}) == 5
    assert (
        plan.runs == 15
        and plan.estimated_minutes(gpu=False) == pytest.approx(15 * 0.33)
        and plan.estimated_minutes(gpu=True) == 7.5
    )


def test_cells_whose_raw_files_are_missing_are_planned_as_missing_and_not_counted(tmp_path: Path) -> None:
    root = data(tmp_path, "peptides-functional/raw/peptide_multi_class_dataset.csv.gz")
    plan = plan_table(load_spec("lrgb-tuned", CONF), options(tmp_path, seeds=4), root)
    runnable = [cell.cell.label for cell in plan.cells if cell.runnable]
    assert runnable == ["Peptides-func / GCN", "Peptides-func / GINE", "Peptides-func / GatedGCN", "Peptides-func / GPS"]
    missing = [cell for cell in plan.cells if not cell.runnable]
    assert len(missing) == 12 and plan.runs == 16
    assert missing[0].missing_data == (str(root / "peptides-structural/raw/peptide_structure_dataset.csv.gz"),)


def test_launchers_joblib_for_several_jobs_capped_by_the_cells_runs_or_the_named_one(tmp_path: Path) -> None:
    assert launcher_overrides(options(tmp_path, jobs=1), 3) == []
    assert launcher_overrides(options(tmp_path, jobs=8), 3) == ["hydra/launcher=joblib", "hydra.launcher.n_jobs=3"]
    assert launcher_overrides(options(tmp_path, launcher="submitit_slurm"), 3) == ["hydra/launcher=submitit_slurm"]


def test_auto_jobs_is_gpu_memory_over_memory_per_run_else_the_cores() -> None:
    assert auto_jobs(16, 80.0, 8.0) == 10
    assert auto_jobs(4, 80.0, 8.0) == 4
    assert auto_jobs(16, 4.0, 8.0) == 1
    assert auto_jobs(2, None, 8.0) == 2


def test_the_data_root_follows_the_paths_config() -> None:
    assert data_root(("paths.data_dir=/x",), {"GRAPHBENCH_DATA": "/y"}) == Path("/x")
    assert data_root((), {"GRAPHBENCH_DATA": "/y"}) == Path("/y")


@pytest.mark.parametrize(
    ("launcher", "jobs", "target"),
    [("submitit_slurm", 1, "submitit_launcher.SlurmLauncher"), (None, 4, "joblib_launcher.JoblibLauncher")],
)
def test_a_cells_command_composes_with_its_launcher_sweep_dir_and_resume(
    tmp_path: Path, launcher: str | None, jobs: int, target: str
) -> None:
    root = data(tmp_path, "Planetoid/Cora/raw", "Planetoid/CiteSeer/raw")
    cell = plan_table(load_spec("kipf-welling-2017", CONF), options(tmp_path, launcher=launcher, jobs=jobs), root).cells[1]
    one_job = [override.replace("seed=0,1,2", "seed=2") for override in cell.overrides]  # compose takes no sweep
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
            cfg = compose("config", overrides=one_job, return_hydra_config=True)
    finally:
        GlobalHydra.instance().clear()
    assert cfg.hydra.launcher._target_.endswith(target)
    assert cfg.hydra.sweep.dir == str(cell.sweep_dir) and cfg.resume == "auto" and cfg.dataset.name == "citeseer"
    if launcher is None:
        assert cfg.hydra.launcher.n_jobs == 3  # capped by the cell's 3 runs
