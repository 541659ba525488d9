"""The verdict on hand-made numbers, deviations from recipe cards, and the Markdown and CSV of a table."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np
import pytest

from graphbench.report.collect import load_run
from graphbench.report.literature import PaperValue
from graphbench.reproduce.plan import Options, plan_table
from graphbench.reproduce.spec import load_spec
from graphbench.reproduce.table import cell_result, deviations_of, format_csv, format_markdown, verdict
from tests.paths import CONF
from tests.reproduce._runs import write_result


def paper(value: float, std: float | None) -> PaperValue:
    return PaperValue(metric="accuracy", value=value, source="p", std=std)


@pytest.mark.parametrize(
    ("ours", "ours_std", "n", "published", "expected"),
    [
        (80.5, 0.1, 3, paper(80.0, 0.5), (1.0, "within 1 std")),
        (79.75, 0.1, 3, paper(80.0, 0.5), (-0.5, "within 1 std")),
        (81.0, 0.1, 3, paper(80.0, 0.5), (2.0, "within 2 std")),
        (79.0, 0.1, 3, paper(80.0, 0.5), (-2.0, "within 2 std")),
        (81.25, 0.1, 3, paper(80.0, 0.5), (2.5, "differs")),
        (80.5, 0.25, 3, paper(80.0, None), (2.0, "within 2 std (ours; paper gives none)")),
        (80.5, 0.125, 3, paper(80.0, 0.0), (4.0, "differs (ours; paper gives none)")),
        (80.125, 0.25, 3, paper(80.0, None), (0.5, "within 1 std (ours; paper gives none)")),
        (0.0, 0.0, 3, paper(0.0, 0.0), (0.0, "equal")),  # NCMemo's MR at h=1.0: no std on either side
        (80.0, 0.3, 3, paper(80.0, 0.5), (0.0, "equal")),
        (100 * float(np.float32(0.1)), 0.0, 5, paper(10.0, 0.0), (0.0, "equal")),  # CSL at chance, recorded in float32
    ],
)
def test_the_verdict_reads_the_difference_in_the_papers_std_or_ours_when_it_gives_none(
    ours: float, ours_std: float, n: int, published: PaperValue, expected: tuple[float, str]
) -> None:
    assert verdict(ours, ours_std, n, published) == expected


@pytest.mark.parametrize(
    ("ours", "ours_std", "n", "published", "expected"),
    [
        (80.5, math.nan, 1, paper(80.0, None), "no std to compare"),
        (80.5, 0.0, 3, paper(80.0, None), "no std to compare"),
        (10.0001, 0.0, 5, paper(10.0, 0.0), "no std to compare"),  # beyond float32 rounding: not equal
        (80.5, 0.1, 3, None, "no paper value"),
        (math.nan, math.nan, 0, paper(80.0, 0.5), "not run"),
    ],
)
def test_without_a_yardstick_the_verdict_says_why(
    ours: float, ours_std: float, n: int, published: PaperValue | None, expected: str
) -> None:
    d, text = verdict(ours, ours_std, n, published)
    assert math.isnan(d) and text == expected


CARD = {
    "source": "paper",
    "deviations": [
        {"key": "trainer.max_epochs", "source": 250, "ours": 16, "why": "CPU", "effect": "lower AP"},
        {"key": "optimizer.lr", "source": 0.001, "ours": 0.01, "why": "w", "effect": "e"},
    ],
}


def test_deviations_are_read_from_each_runs_recipe_card_once_per_key(tmp_path: Path) -> None:
    runs = [load_run(write_result(tmp_path / f"s{seed}", seed=seed, recipe_card=CARD) / "results.json") for seed in (0, 1)]
    deviations = deviations_of(runs)
    assert [d.formatted() for d in deviations] == [
        "trainer.max_epochs: source 250, ours 16. CPU Effect: lower AP.",
        "optimizer.lr: source 0.001, ours 0.01. w Effect: e.",
    ]
    assert deviations_of([load_run(write_result(tmp_path / "none", seed=0) / "results.json")]) == []


def test_the_markdown_and_csv_show_ours_beside_the_papers_with_the_verdict(tmp_path: Path) -> None:
    root = tmp_path / "data"
    (root / "Planetoid/Cora/raw").mkdir(parents=True)  # CiteSeer's raw files are missing
    plan = plan_table(load_spec("kipf-welling-2017", CONF), Options(3, False, 1, None, tmp_path / "out", ()), root)
    cora = plan.cells[0]
    for slot, accuracy in zip(cora.runs, (0.82, 0.83, 0.84)):
        write_result(slot.path, seed=slot.seed, metrics={"test/accuracy": accuracy}, recipe_card=CARD)
    results = [cell_result(cell) for cell in plan.cells]
    assert results[0].values == pytest.approx((82.0, 83.0, 84.0))
    markdown = format_markdown(plan, results)
    rows = [line for line in markdown.splitlines() if line.startswith("| Cora") or line.startswith("| CiteSeer")]
    assert rows == [
        "| Cora | GCN | test accuracy (%) | 83.00 ± 1.00 (n=3) | 81.50 | +1.50 | within 2 std (ours; paper gives none) "
        "| trainer.max_epochs; optimizer.lr |",
        f"| CiteSeer | GCN | test accuracy (%) | missing data: {root / 'Planetoid/CiteSeer/raw'} | 70.30 | n/a | missing data |  |",
    ]
    assert "- Cora / GCN: trainer.max_epochs: source 250, ours 16. CPU Effect: lower AP." in markdown
    assert "Provenance: " in markdown and cora.shown in markdown and plan.cells[1].shown not in markdown
    assert "Not a reproduction" not in markdown
    table = list(csv.DictReader(io.StringIO(format_csv(plan, results))))
    assert [(row["row"], row["n"], row["paper_value"], row["verdict"]) for row in table] == [
        ("Cora", "3", "81.5", "within 2 std (ours; paper gives none)"),
        ("CiteSeer", "0", "70.3", "missing data"),
    ]


def test_a_null_paper_value_is_said_once_with_its_note(tmp_path: Path) -> None:
    root = tmp_path / "data"
    for name in ("Cora", "CiteSeer"):
        (root / f"Planetoid/{name}/raw").mkdir(parents=True)
    plan = plan_table(load_spec("igb-ranks", CONF), Options(1, False, 1, None, tmp_path / "out", ()), root)
    assert plan.cells[0].cell.label == "GCN / Cora public"
    write_result(plan.cells[0].runs[0].path, seed=0, metrics={"test/accuracy": 0.75})
    markdown = format_markdown(plan, [cell_result(cell) for cell in plan.cells])
    assert "| GCN | Cora public | test accuracy (%) | 75.00 ± n/a (n=1) | null | n/a | no paper value |" in markdown
    assert "| GCN | Cora i.i.d. | test accuracy (%) | not run (n=0 of 1) | null | n/a | no paper value |" in markdown
    assert markdown.count("Paper value null for ") == 1 and "i.i.d.: not recorded in conf/ or docs/results.md." in markdown
    assert "Paper value null for GCN / Cora public, GCN / Cora i.i.d., " in markdown


def test_table_5s_rate_and_score_read_the_same_runs(tmp_path: Path) -> None:
    root = tmp_path / "data"
    for level in ("0.00", "0.30", "0.50", "0.70", "1.00"):
        (root / f"syn-cora/h{level}-r1.npz").mkdir(parents=True)
    plan = plan_table(load_spec("ncmemo-table5", CONF), Options(1, False, 1, None, tmp_path / "out", ()), root)
    write_result(plan.cells[0].runs[0].path, seed=0, metrics={"memorization/rate": 0.8363, "memorization/mean_candidate": 0.7175})
    markdown = format_markdown(plan, [cell_result(cell) for cell in plan.cells])
    assert "| h=0.0 | GCN MR | memorization rate of S_C (%) | 83.63 ± n/a (n=1) | 83.63 ± 1.82 | +0.00 | equal |" in markdown
    assert (
        "| h=0.0 | GCN score | average memorization score of S_C | 0.72 ± n/a (n=1) | 0.71 ± 0.02 | +0.50 | within 1 std |"
        in markdown
    )
    assert markdown.count("graphbench -m experiment=ncmemo/gcn dataset=syn-cora dataset.homophily=0.0 ") == 1
