"""``python -m benchmarks --quick`` runs every benchmark on tiny inputs and prints the whole table.
No timing is asserted: figures from a smoke run mean nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.cli import BENCHMARKS
from benchmarks.common import Row, Target
from benchmarks.report import PROFILE_PATH, BenchRun, load_runs, markdown, merged, render_page, save_runs
from tests.paths import REPO, SHARED_DATA

#: (benchmark column, case prefix) of every row the quick table must contain
EXPECTED_ROWS = [
    ("reference: time / training epoch", "LRGB-tuned GCN"),
    ("reference: time / training epoch", "LRGB-tuned GINE"),
    ("reference: time / training epoch", "LRGB-tuned GatedGCN"),
    ("overhead: time / training epoch", "GCN, cycles"),
    ("overhead: time / training epoch", "GatedGCN, cycles"),
    ("overhead: time / training epoch", "GCN full-batch, Cora"),
    ("overhead: time / training step", "LRGB-tuned GCN"),
    ("dispatch: training steps / s", "LRGB-tuned GCN"),
    ("preprocess: raw csv -> dataset", "Peptides-func"),
    ("preprocess: floor (RDKit MolFromSmiles alone)", "Peptides-func"),
    ("preprocess: reload cache", "Peptides-func"),
    ("pe: precompute", "LapPE k=10"),
    ("pe: precompute", "RWSE 20 steps"),
    ("pipeline: data wait / step time", "cycles recipe"),
    ("memory: peak RSS of training", "cycles recipe"),
    ("memory: RSS growth per epoch", "cycles recipe"),
]
SAMPLERS = ("neighbor", "cluster_gcn", "saint_node", "saint_edge", "saint_rw")
for _size in ("sbm-large 2", "sbm-large 4"):  # the quick sizes: 2,000 and 4,000 nodes
    EXPECTED_ROWS += [("samplers: full-batch step", _size)] + [(f"samplers: {s}", _size) for s in SAMPLERS]
EXPECTED_ROWS += [(f"samplers: {s} memory growth", "4") for s in SAMPLERS]
EXPECTED_ROWS += [(f"samplers: {s} data wait", "sbm-large 2") for s in SAMPLERS]
EXPECTED_ROWS += [("contention: machine floor", "a one-thread Python loop")]
EXPECTED_ROWS += [("contention: crossover", "GCN step")] * 2  # the quick sizes: 500 and 4,000 nodes
EXPECTED_ROWS += [("contention: busy / idle", "default experiment"), ("contention: idle", "default experiment")]


@pytest.mark.slow  # every benchmark group end to end: minutes on 2 cores
def test_quick_run_prints_every_row(tmp_path: Path) -> None:
    env = {**os.environ, "WANDB_MODE": "offline", "PYTHONPATH": str(REPO)}
    command = [
        sys.executable,
        "-m",
        "benchmarks",
        "--quick",
        "--threads",
        "1",
        "--data-dir",
        str(SHARED_DATA),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--output",
        str(tmp_path / "table.md"),
        "--results",
        str(tmp_path / "results.json"),
        "--docs",
        str(tmp_path / "performance.md"),
    ]
    # about 5 minutes on 2 idle cores: the limit is there for a hang, not for a loaded machine
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("| benchmark | case | graphbench | reference | figure | target | verdict |")
    rows = [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines[2:] if line.startswith("| ")]
    assert [(r[0], r[1].split(" (")[0].split(",")[0]) for r in rows] == [(b, c.split(",")[0]) for b, c in EXPECTED_ROWS]
    for row in rows:
        verdict = row[6]
        assert verdict in ("met", "reported") or verdict.startswith(("missed: ", "skipped: ")), row
        if row[0] == "overhead: time / training step":  # the tiny batch's row: no data needed
            assert verdict == "met" or verdict.startswith("missed: "), row
            assert "Lightning alone" in row[7] and "forward and backward passes" in row[7], row
        elif row[0].startswith("overhead") and not verdict.startswith("skipped"):  # the split of an epoch and what follows it
            assert all(
                part in row[7]
                for part in (
                    "network forward",
                    "the rest",
                    "after the last step",
                    "a whole epoch takes",
                    "kept busy",
                    "Lightning alone",
                )
            ), row
    assert (tmp_path / "table.md").read_text().startswith(lines[0])
    assert "python -m benchmarks --quick" in done.stdout
    page = (tmp_path / "performance.md").read_text()  # the page from the stored rows: every row, its command above
    assert f"    python -m benchmarks {' '.join(command[3:])}" in page
    assert all(line in page for line in lines[2:] if line.startswith("| "))


def test_script_entry_point_shows_help() -> None:
    done = subprocess.run([sys.executable, "benchmarks/run.py", "--help"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "--only" in done.stdout and "--quick" in done.stdout


def test_unknown_benchmark_names_the_valid_ones() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--only", "nope"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert "unknown benchmark(s) ['nope']" in done.stderr and "overhead" in done.stderr


def fake_run(command: str, date: str, rows: list[Row]) -> BenchRun:
    return BenchRun(command=command, date=date, commit="abc123", machine="Test CPU: 2 CPU cores", rows=rows)


PE_ROW = Row("pe: precompute", "LapPE k=10", "8.38 s", "83.82 s", figure=9.96, target=Target(">=", 10.0), note="n")
MEMORY_ROW = Row("memory: peak RSS of training", "cycles recipe", "1326 MiB")
SAMPLER_ROWS = [
    Row("samplers: neighbor", "sbm-large 1", "0.37 batches/s"),
    Row("samplers: saint_rw", "sbm-large 1", "2.08 batches/s"),
]


def test_the_page_has_each_table_under_its_command_and_what_the_rows_compare() -> None:
    runs = [
        fake_run("python -m benchmarks --only memory", "2026-11-30", [MEMORY_ROW]),
        fake_run("python -m benchmarks --only pe", "2026-12-03", [PE_ROW]),
    ]
    page = render_page(runs, ["pe", "memory"])
    lines = page.splitlines()
    assert lines[0] == "# Performance (`benchmarks/`)" and "do not edit by hand" in lines[2]
    pe, memory = lines.index("## pe"), lines.index("## memory")  # in the runner's group order
    assert pe < memory
    assert lines[pe + 2 : pe + 7] == [
        "    python -m benchmarks --only pe",
        "",
        "on 2026-12-03 at commit abc123, Test CPU: 2 CPU cores:",
        "",
        "| benchmark | case | graphbench | reference | figure | target | verdict | notes |",
    ]
    assert (
        lines[pe + 8]
        == "| pe: precompute | LapPE k=10 | 8.38 s | 83.82 s | 9.96x | >= 10.00x | missed: 9.96x, 0% short of 10.00x | n |"
    )
    assert lines[memory + 8] == "| memory: peak RSS of training | cycles recipe | 1326 MiB | — | — | — | reported |  |"
    explained = lines.index("## What each group measures")
    assert explained < pe
    pe_line, memory_line = lines[explained + 4 : explained + 6]  # one line each, in the runner's group order
    assert pe_line.startswith("| [`pe`](../benchmarks/pe.py) | Positional encodings over a whole dataset: ")
    assert "`precompute_store`" in pe_line and pe_line.endswith(" | `python -m benchmarks --only pe --data-dir ../shared/data` |")
    assert memory_line.startswith("| [`memory`](../benchmarks/memory.py) | Memory: peak RSS of a Peptides-func training run")
    assert not any(line.startswith("## Where") for line in lines)  # no profile given


def test_the_page_ends_with_the_stored_profile() -> None:
    profile = "## Where a training step's time goes\n\n| function | calls / step |\n|---|---|\n| `f` | 1 |\n"
    page = render_page([fake_run("python -m benchmarks --only pe", "2026-12-03", [PE_ROW])], ["pe"], profile)
    assert page.endswith("\n\n" + profile) and page.index("## pe") < page.index("## Where a training step's time goes")


def test_a_run_replaces_the_rows_of_the_benchmarks_it_measured(tmp_path: Path) -> None:
    old = fake_run("GRAPHBENCH_BENCH_SAMPLERS=neighbor,saint_rw python -m benchmarks --only samplers", "2026-12-01", SAMPLER_ROWS)
    memory = fake_run("python -m benchmarks --only memory", "2026-11-30", [MEMORY_ROW])
    new_rw = Row("samplers: saint_rw", "sbm-large 1", "6.05 batches/s")
    new = fake_run("GRAPHBENCH_BENCH_SAMPLERS=saint_rw python -m benchmarks --only samplers", "2026-12-04", [new_rw])
    runs = merged([old, memory], new)
    assert [(run.date, [row.graphbench for row in run.rows]) for run in runs] == [
        ("2026-12-01", ["0.37 batches/s"]),  # neighbor kept with its own command
        ("2026-11-30", ["1326 MiB"]),
        ("2026-12-04", ["6.05 batches/s"]),
    ]
    replaced = merged([memory], fake_run("python -m benchmarks --only memory", "2026-12-04", [MEMORY_ROW]))
    assert [run.date for run in replaced] == ["2026-12-04"]  # a run left without rows is dropped
    path = tmp_path / "results.json"
    save_runs(path, runs)
    assert load_runs(path) == runs  # targets and figures survive the round trip


def test_render_writes_the_page_from_stored_results_and_refuses_none(tmp_path: Path) -> None:
    results, docs = tmp_path / "results.json", tmp_path / "performance.md"
    render = [sys.executable, "-m", "benchmarks", "--render", "--results", str(results), "--docs", str(docs)]
    done = subprocess.run(render, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and f"{results} holds no benchmark results" in done.stderr and not docs.exists()
    save_runs(results, [fake_run("python -m benchmarks --only pe", "2026-12-03", [PE_ROW])])
    done = subprocess.run(render, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    profile = PROFILE_PATH.read_text() if PROFILE_PATH.exists() else ""
    assert docs.read_text() == render_page(load_runs(results), list(BENCHMARKS), profile)


def test_the_docstrings_sphinx_roles_become_markdown_code() -> None:
    assert (
        markdown("the :class:`~benchmarks.reference.ReferenceNet` and ``x``") == "the `benchmarks.reference.ReferenceNet` and `x`"
    )
    page = render_page([fake_run("python -m benchmarks --only pe", "2026-12-03", [PE_ROW])], ["pe"])
    assert "`precompute_store`" in page and "``" not in page and ":class:" not in page
