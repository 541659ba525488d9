"""The paper column: which published value a group is compared with, and the gap in reproduced stds."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from graphbench.report.__main__ import main
from graphbench.report.literature import PaperValue, gap_in_std, paper_value
from tests.paths import REPO

KW = {"metric": "accuracy", "value": 0.815, "model": "gcn", "source": "Kipf & Welling 2017"}


def test_experiment_entry_wins_over_dataset_entry_and_model_must_match() -> None:
    config = {
        "model": {"name": "gcn"},
        "literature": [{"metric": "accuracy", "value": 0.80, "source": "experiment"}],
        "dataset": {"literature": [KW, {"metric": "accuracy", "value": 0.79, "model": "gat", "source": "GAT"}]},
    }
    assert paper_value(config, "accuracy") == PaperValue("accuracy", 0.80, "experiment")
    del config["literature"]
    assert paper_value(config, "accuracy") == PaperValue("accuracy", 0.815, "Kipf & Welling 2017", model="gcn")
    config["model"]["name"] = "sage"
    assert paper_value(config, "accuracy") is None  # entries name gcn and gat only
    assert paper_value({"dataset": {"literature": [KW]}, "model": {"name": "gcn"}}, "f1_macro") is None
    assert paper_value(None, "accuracy") is None


def test_gap_is_in_units_of_the_reproduced_std() -> None:
    paper = PaperValue("accuracy", 0.815, "KW")
    assert gap_in_std(0.82, 0.02, paper) == pytest.approx(0.25)
    assert math.isnan(gap_in_std(0.82, 0.0, paper))
    assert math.isnan(gap_in_std(0.82, 0.02, None))


def test_report_prints_the_paper_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """gcn: 0.80, 0.82, 0.84 -> 0.8200 ± 0.0200, paper 0.815 -> Δ = 0.25; mlp has no entry: n/a."""
    values = {"gcn": [0.80, 0.82, 0.84], "mlp": [0.50, 0.52, 0.54]}
    job = 0
    for model, accs in values.items():
        for seed, acc in enumerate(accs):
            out = tmp_path / str(job)
            out.mkdir()
            config = {"seed": seed, "model": {"name": model}, "dataset": {"name": "cora", "literature": [KW]}}
            record = {
                "status": "completed",
                "config": config,
                "metric": "accuracy",
                "higher_is_better": True,
                "num_params": 100,
                "best_epoch": 3,
                "time_per_epoch_s": 0.1,
                "metrics": {"test/accuracy": acc, "val/accuracy": acc},
            }
            (out / "results.json").write_text(json.dumps(record))
            job += 1
    assert main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| paper | Δ vs paper (std) |" in out
    gcn_row = next(line for line in out.splitlines() if line.startswith("| model=gcn"))
    assert gcn_row.endswith("| 0.8150 (Kipf & Welling 2017) | 0.25 |")
    mlp_row = next(line for line in out.splitlines() if line.startswith("| model=mlp"))
    assert mlp_row.endswith("| n/a | n/a |")


def test_a_task_entry_wins_and_must_match_the_dataset() -> None:
    igb = {"metric": "accuracy", "value": 0.858, "model": "gcn", "dataset": "cora", "source": "IGB"}
    config = {"model": {"name": "gcn"}, "dataset": {"name": "cora", "literature": [KW]}, "task": {"literature": [igb]}}
    assert paper_value(config, "accuracy") == PaperValue("accuracy", 0.858, "IGB", model="gcn", dataset="cora")
    config["dataset"]["name"] = "citeseer"  # the task's entry is Cora's: the dataset's own entry answers
    assert paper_value(config, "accuracy") == PaperValue("accuracy", 0.815, "Kipf & Welling 2017", model="gcn")


@pytest.mark.parametrize(
    ("dataset", "model", "value"),
    [("cora", "gcn", 0.858), ("citeseer", "gcn", 0.760), ("cora", "appnp", 0.858), ("citeseer", "mixhop", 0.755)],
)
def test_validutil_runs_are_compared_with_the_igb_readme(dataset: str, model: str, value: float) -> None:
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=["task=validutil", f"dataset={dataset}", f"model={model}"])
    paper = paper_value(OmegaConf.to_container(cfg, resolve=False), "accuracy")
    assert paper is not None and paper.value == value and paper.source.startswith("IGB README, ValidUtil")


CARD = {
    "source": "THUDM/GRAND@7a2fd6e run_cora.sh; Feng et al. 2020, Table 3",
    "deviations": [
        {"key": "trainer.max_epochs", "source": 5000, "ours": 2000, "why": "Patience ends runs first.", "effect": None},
        {"key": "model.init", "source": "grand", "ours": "default", "why": "Shown here.", "effect": "-0.4 points"},
    ],
}


def test_report_prints_each_rows_recipe_card_under_its_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two recipes (one with two deviations, one with none) and a run without a card: the card lines follow the
    table rows, best row first; a card does not split or label the groups."""
    cards = {"grand": CARD, "gcn": {"source": "Kipf & Welling 2017, Table 2", "deviations": []}, "mlp": None}
    for job, (model, acc) in enumerate([("grand", 0.85), ("grand", 0.84), ("gcn", 0.81), ("gcn", 0.80), ("mlp", 0.5)]):
        out = tmp_path / str(job)
        out.mkdir()
        record = {
            "status": "completed",
            "config": {"seed": job, "model": {"name": model}, "dataset": {"name": "cora"}, "recipe_card": cards[model]},
            "metric": "accuracy",
            "higher_is_better": True,
            "num_params": 100,
            "best_epoch": 3,
            "time_per_epoch_s": 0.1,
            "metrics": {"test/accuracy": acc, "val/accuracy": acc},
        }
        (out / "results.json").write_text(json.dumps(record))
    assert main([str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = lines.index("| model=mlp | 0.5000 ± n/a | 0.5000 ± n/a | 1 (1 × 1) | 100 | 0.10 | 3 | n/a | n/a |") + 1
    assert lines[start : start + 8] == [
        "",
        "Recipe card of model=grand: THUDM/GRAND@7a2fd6e run_cora.sh; Feng et al. 2020, Table 3",
        "- deviation trainer.max_epochs: source 5000, ours 2000. Patience ends runs first. Effect: not measured.",
        "- deviation model.init: source grand, ours default. Shown here. Effect: -0.4 points.",
        "",
        "Recipe card of model=gcn: Kipf & Welling 2017, Table 2",
        "- no deviations",
        "",
    ]
    assert sum(line.startswith("| model=") for line in lines) == 3
