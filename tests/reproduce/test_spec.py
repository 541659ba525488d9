"""The table files: each parses into its cells, every cell composes as a Hydra config, bad files are named."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from graphbench.config.checks import recipe_card_problems
from graphbench.reproduce.spec import SpecError, closest_names, load_spec, parse_spec, slugify, spec_names
from tests.paths import CONF

#: every table and its cell count
CELLS: dict[str, int] = {
    "bench-gnns-csl": 2,
    "bench-gnns-tu": 10,
    "gcnii": 2,
    "gin-mutag": 3,
    "grand": 2,
    "igb-ranks": 28,
    "igb-validutil": 6,
    "kipf-welling-2017": 2,
    "lrgb-tuned": 16,
    "ncmemo-table5": 10,
}


def test_the_tables_are_those_named() -> None:
    assert spec_names(CONF) == sorted(CELLS)


@pytest.mark.parametrize("name", sorted(CELLS))
def test_every_cell_of_every_table_composes_with_its_seed_fold_and_fast_overrides(name: str) -> None:
    spec = load_spec(name, CONF)
    assert len(spec.cells) == CELLS[name]
    assert len({cell.slug for cell in spec.cells}) == len(spec.cells)
    fold = [f"dataset.split_index={spec.folds[-1]}"] if spec.folds else []
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
            for cell in spec.cells:
                cfg = compose("config", overrides=[*cell.overrides, *spec.fast, *cell.fast, "seed=1", *fold])
                assert cfg.seed == 1
                if spec.folds:
                    assert cfg.dataset.split_index == spec.folds[-1]
    finally:
        GlobalHydra.instance().clear()


def test_kipf_welling_holds_the_papers_values_in_percent() -> None:
    spec = load_spec("kipf-welling-2017", CONF)
    papers = {cell.row: (cell.paper.value, cell.paper.std) for cell in spec.cells if cell.paper is not None}
    assert papers == {"Cora": (81.5, None), "CiteSeer": (70.3, None)}
    assert [cell.label for cell in spec.ordered_cells()] == ["Cora / GCN", "CiteSeer / GCN"]
    assert spec.cells[0].metric.scale == 100 and spec.cells[0].metric.key == "test/accuracy"


def test_ncmemo_holds_table_5s_rate_and_score_per_homophily_level() -> None:
    """NCMemo Table 5 (syn-cora, GCN, 3 seeds): MR (%) and the average memorization score of S_C, mean and std."""
    spec = load_spec("ncmemo-table5", CONF)
    assert [cell.row for cell in spec.ordered_cells()][::2] == ["h=0.0", "h=0.3", "h=0.5", "h=0.7", "h=1.0"]
    papers = {(cell.row, cell.column): (cell.paper.value, cell.paper.std) for cell in spec.cells if cell.paper is not None}
    assert papers == {
        ("h=0.0", "GCN MR"): (83.63, 1.82),
        ("h=0.3", "GCN MR"): (63.96, 1.19),
        ("h=0.5", "GCN MR"): (45.95, 1.62),
        ("h=0.7", "GCN MR"): (25.98, 1.45),
        ("h=1.0", "GCN MR"): (0.0, 0.0),
        ("h=0.0", "GCN score"): (0.7091, 0.0168),
        ("h=0.3", "GCN score"): (0.5573, 0.0047),
        ("h=0.5", "GCN score"): (0.4106, 0.0126),
        ("h=0.7", "GCN score"): (0.2616, 0.0070),
        ("h=1.0", "GCN score"): (0.0021, 0.0005),
    }
    metrics = {cell.column: (cell.metric.key, cell.metric.scale) for cell in spec.cells}
    assert metrics == {"GCN MR": ("memorization/rate", 100.0), "GCN score": ("memorization/mean_candidate", 1.0)}
    for rate, score in zip(spec.ordered_cells()[::2], spec.ordered_cells()[1::2]):
        assert rate.overrides == score.overrides and rate.overrides[0] == "experiment=ncmemo/gcn"


GOOD = {
    "title": "t",
    "source": "s",
    "metric": {"key": "test/accuracy"},
    "seeds": 2,
    "rows": ["A"],
    "columns": ["X"],
    "cost": {"cpu_minutes_per_run": 1, "gpu_minutes_per_run": 1, "gpu_memory_gb": 1},
    "cells": [{"row": "A", "column": "X", "overrides": ["model=gcn"], "paper": {"value": 1.0, "std": 0.1, "source": "p"}}],
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"colour": 1}, "unknown key(s) ['colour']"),
        ({"seeds": 0}, "'seeds' must be at least 1"),
        ({"seeds": True}, "'seeds' must be int"),
        ({"cells": [{"row": "A", "column": "X", "paper": None}]}, "add 'paper_note'"),
        ({"cells": [{"row": "B", "column": "X", "paper": None, "paper_note": "n"}]}, "cell 'B / X' is not in the layout"),
        ({"cells": [GOOD["cells"][0], GOOD["cells"][0]]}, "cell 'A / X' is listed twice"),
        ({"cells": [{"row": "A", "column": "X", "paper": {"value": 1.0, "std": -1, "source": "p"}}]}, "non-negative"),
    ],
)
def test_a_bad_table_file_is_named_with_what_is_wrong(change: dict, message: str) -> None:
    with pytest.raises(SpecError, match=r"^t\.yaml") as info:
        parse_spec("t", {**GOOD, **change}, "t.yaml")
    assert message in str(info.value)


def test_an_unknown_name_gets_the_closest_valid_names(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as info:
        load_spec("kipf", CONF)
    assert str(info.value) == "unknown table 'kipf'; closest: kipf-welling-2017 (see --list)"
    assert closest_names("ncmemo", spec_names(CONF)) == ["ncmemo-table5"]
    assert closest_names("xyzzy", spec_names(CONF)) == []
    with pytest.raises(SpecError, match=r"^unknown table 'xyzzy'; valid: bench-gnns-csl, bench-gnns-tu, gcnii, "):
        load_spec("xyzzy", CONF)


def test_slugify() -> None:
    assert slugify("Cora / GCN") == "cora-gcn"
    assert slugify("h=0.3-GCN") == "h-0.3-gcn"


@pytest.mark.parametrize("name", sorted(CELLS))
def test_every_cells_resolved_config_carries_a_well_formed_recipe_card(name: str) -> None:
    """A table's cells are papers' settings: each resolved config names its source and what still differs."""
    spec = load_spec(name, CONF)
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
            for cell in spec.cells:
                card = compose("config", overrides=list(cell.overrides)).recipe_card
                assert card is not None, f"{cell.label}: no recipe_card"
                assert recipe_card_problems(card) == [] and str(card.source).strip()
    finally:
        GlobalHydra.instance().clear()
