"""The command line: --list, --dry-run for every table, bad input in one line, and --fast end to end."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from graphbench.reproduce.__main__ import main
from graphbench.reproduce.spec import load_spec, spec_names
from tests.paths import CONF, SHARED_DATA
from tests.reproduce._runs import write_result
from tests.reproduce.test_spec import CELLS


def every_data_path(root: Path) -> Path:
    for name in spec_names(CONF):
        for cell in load_spec(name, CONF).cells:
            for path in cell.data:
                (root / path).mkdir(parents=True, exist_ok=True)
    return root


@pytest.mark.parametrize("name", sorted(CELLS))
def test_dry_run_prints_one_command_per_cell_and_runs_nothing(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = every_data_path(tmp_path / "data")
    out = tmp_path / "out"
    assert main([name, f"paths.data_dir={root}", "--dry-run", "--seeds", "2", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    commands = [line for line in lines if line.startswith("graphbench -m ")]
    spec = load_spec(name, CONF)
    launched = list({cell.overrides: cell for cell in reversed(spec.ordered_cells())}.values())[::-1]  # the first per overrides
    assert len(commands) == len(launched)
    for command, cell in zip(commands, launched):
        # shell-quoted as printed, so that it can be pasted ('task.grid.model.hidden_dim=[18,33,66]')
        assert command.startswith(f"graphbench -m {shlex.join([*cell.overrides, f'paths.data_dir={root}', 'seed=0,1'])} ")
        assert f"hydra.sweep.dir={out / name / cell.slug} " in command
    assert sum(": the runs of " in line for line in lines) == CELLS[name] - len(launched)
    runs = len(launched) * 2 * max(len(spec.folds), 1)
    assert lines[1].startswith(f"# {runs} runs; estimated ")
    assert not out.exists()


def test_overrides_may_follow_the_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = every_data_path(tmp_path / "data")
    argv = ["gin-mutag", "--launcher", "submitit_slurm", "--dry-run", f"paths.data_dir={root}", "trainer=gpu"]
    assert main(argv) == 0
    command = capsys.readouterr().out.splitlines()[3]
    assert command.startswith(f"graphbench -m experiment=gin-mutag/gin0 paths.data_dir={root} trainer=gpu seed=0 ")
    assert command.endswith(" hydra/launcher=submitit_slurm")


def test_dry_run_lists_the_cells_whose_raw_files_are_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "data"
    (root / "peptides-functional/raw/peptide_multi_class_dataset.csv.gz").mkdir(parents=True)
    assert main(["lrgb-tuned", f"paths.data_dir={root}", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.count("graphbench -m experiment=lrgb-tuned/peptides-func-") == 4
    assert out.count(": not run, raw files missing: ") == 12
    assert "# 16 runs; estimated " in out
    assert main(["--list", f"paths.data_dir={root}"]) == 0  # the runs and the cost are the runnable cells'
    listed = capsys.readouterr().out
    assert (
        f"cells: 16 (12 with raw files missing under {root}: not run); 4 seeds; the 4 runnable cells: 16 runs; estimated "
        in listed
    )


def test_the_estimate_counts_only_the_runs_left_and_no_cost_for_fast(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = every_data_path(tmp_path / "data")
    argv = ["kipf-welling-2017", f"paths.data_dir={root}", "--dry-run", "--seeds", "2", "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    assert (
        capsys.readouterr().out.splitlines()[1]
        == "# 4 runs; estimated 1 min 36 s on a 2-core CPU, 2 min 00 s on one GPU (one run at a time)"
    )
    table = tmp_path / "out" / "kipf-welling-2017"
    write_result(table / "cora-gcn" / "seed0", seed=0)
    write_result(table / "cora-gcn" / "seed1", seed=1)
    write_result(table / "citeseer-gcn" / "seed0", seed=0, status="interrupted")  # continued: still to run
    assert main(argv) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        "# 4 runs (2 completed already, 2 to run); estimated 48 s on a 2-core CPU, 1 min 00 s on one GPU (one run at a time)"
    )
    write_result(table / "citeseer-gcn" / "seed0", seed=0)
    write_result(table / "citeseer-gcn" / "seed1", seed=1)
    assert main(argv) == 0
    assert capsys.readouterr().out.splitlines()[1] == "# 4 runs (4 completed already, 0 to run); nothing to run"
    assert main([*argv, "--fast"]) == 0  # --fast writes elsewhere (kipf-welling-2017-fast): nothing completed there
    assert capsys.readouterr().out.splitlines()[1] == (
        "# 2 runs on --fast's smoke settings; not estimated (the table's costs are those of full runs)"
    )


def test_list_names_every_table_with_cells_and_cost(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--list", f"paths.data_dir={every_data_path(tmp_path / 'data')}"]) == 0
    out = capsys.readouterr().out
    for name, cells in CELLS.items():
        assert f"\n{name}: " in f"\n{out}"
        assert f"cells: {cells}; " in out
    assert "kipf-welling-2017: Kipf & Welling 2017" in out
    assert "    rows: ENZYMES, PROTEINS; columns: GCN, GAT, GIN, GatedGCN, MLP\n" in out
    assert "columns: GCN, GINE, GatedGCN, GPS\n" in out and "    rows: Cora, CiteSeer; columns: GCNII\n" in out
    assert "    rows: Cora, CiteSeer; columns: GCN, PPNP, MixHop\n" in out
    assert "cells: 2; 10 seeds; 20 runs; estimated 8 min 00 s on a 2-core CPU, 10 min 00 s on one GPU" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["kipf"], "error: unknown table 'kipf'; closest: kipf-welling-2017 (see --list)\n"),
        (["kipf-welling-2017", "--jobs", "0"], "error: --jobs must be a positive integer or auto, got '0'\n"),
        (
            ["kipf-welling-2017", "--jobs", "2", "--launcher", "submitit_slurm"],
            "error: --jobs runs jobs on this machine; with --launcher submitit_slurm the scheduler does\n",
        ),
        (["kipf-welling-2017", "--seeds", "0"], "error: --seeds must be at least 1, got 0\n"),
    ],
)
def test_bad_input_is_one_line_and_exit_status_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err == message


def test_the_module_runs_as_python_dash_m() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "graphbench.reproduce", "gin-mutag", "--dry-run"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0 and result.stdout.startswith("# gin-mutag: Xu et al. 2019 (GIN), Table 1: MUTAG")


@pytest.mark.real_data
@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "rows"), [("kipf-welling-2017", ["| Cora | GCN |", "| CiteSeer | GCN |"]), ("gin-mutag", ["| MUTAG | GIN-0 |"])]
)
def test_fast_runs_a_table_end_to_end_and_a_second_call_skips_every_run(
    name: str, rows: list[str], tmp_path: Path, shared_cache_dir: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data root not found at {SHARED_DATA}")
    argv = [name, f"paths.data_dir={SHARED_DATA}", f"paths.cache_dir={shared_cache_dir}", "--fast", "--out", str(tmp_path)]
    assert main(argv) == 0
    first = capfd.readouterr()
    assert "**Not a reproduction: a --fast smoke run**" in first.out
    for row in rows:
        assert row in first.out
    assert "(n=1)" in first.out and "Provenance: code " in first.out
    table_dir = tmp_path / f"{name}-fast"
    assert {p.name for p in table_dir.iterdir()} >= {"table.md", "table.csv", f"{name}.png"}
    assert main(argv) == 0
    second = capfd.readouterr()
    assert second.err.count("1 run: 1 completed before (skipped)") == len(load_spec(name, CONF).cells)
    assert "done in" not in second.err


@pytest.mark.real_data
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CELLS))
def test_fast_runs_one_short_epoch_of_every_cell_whose_data_is_in_the_shared_data(
    name: str, tmp_path: Path, shared_cache_dir: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data root not found at {SHARED_DATA}")
    spec = load_spec(name, CONF)
    present = [cell for cell in spec.ordered_cells() if all((SHARED_DATA / path).exists() for path in cell.data)]
    if not present:
        pytest.skip(f"no cell of {name} has its raw files under {SHARED_DATA}")
    argv = [name, f"paths.data_dir={SHARED_DATA}", f"paths.cache_dir={shared_cache_dir}", "--fast", "--out", str(tmp_path)]
    assert main(argv) == 0  # every run of every runnable cell completed
    out = capfd.readouterr().out
    for cell in present:
        line = next(line for line in out.splitlines() if line.startswith(f"| {cell.row} | {cell.column} | "))
        assert "(n=1)" in line, line
