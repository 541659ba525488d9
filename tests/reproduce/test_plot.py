"""The table's figure is written, one panel per metric."""

from __future__ import annotations

from pathlib import Path

from graphbench.reproduce.plan import Options, plan_table
from graphbench.reproduce.plot import write_plot
from graphbench.reproduce.spec import load_spec
from graphbench.reproduce.table import cell_result
from tests.paths import CONF
from tests.reproduce._runs import write_result


def test_the_plot_draws_ours_and_the_papers_value_per_cell(tmp_path: Path) -> None:
    root = tmp_path / "data"
    (root / "Planetoid/Cora/raw").mkdir(parents=True)
    plan = plan_table(load_spec("kipf-welling-2017", CONF), Options(2, False, 1, None, tmp_path / "out", ()), root)
    for slot in plan.cells[0].runs:
        write_result(slot.path, seed=slot.seed, metrics={"test/accuracy": 0.8 + 0.01 * slot.seed})
    path = write_plot("Kipf & Welling", [cell_result(cell) for cell in plan.cells], tmp_path / "fig" / "k.png", fast=True)
    assert path == tmp_path / "fig" / "k.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
