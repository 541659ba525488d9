"""A mistyped command line ends in one line naming the closest valid names; the full lists stay behind
``--help``."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphbench.run.config_errors import did_you_mean, missing_option_message, unknown_key_message
from tests.e2e.test_cli import run_cli


def test_did_you_mean_names_the_close_names_only() -> None:
    assert did_you_mean("mutg", ["mutag", "zinc", "cora"]) == " (did you mean mutag?)"
    assert did_you_mean("zzzz", ["mutag", "zinc", "cora"]) == ""
    assert missing_option_message("model", "gcnn", ["gat", "gcn"]) == (
        "model=gcnn: no such model (did you mean gcn?); --help lists every group's options"
    )
    assert unknown_key_message("trainer.max_epoch", ["trainer.max_epochs"]).startswith(
        "trainer.max_epoch: no such key (did you mean trainer.max_epochs?); "
    )


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("dataset=mutg", "error: dataset=mutg: no such dataset (did you mean mutag?)"),
        ("model=gatv", "error: model=gatv: no such model (did you mean gatv2 or gat?)"),
        ("schedulr=cosine", "error: schedulr: no such config group or key (did you mean scheduler?)"),
        ("hydra/launcher=joblb", "error: hydra/launcher=joblb: no such hydra/launcher (did you mean joblib?)"),
        ("trainer.max_epoch=2", "error: trainer.max_epoch: no such key (did you mean trainer.max_epochs"),
    ],
)
def test_a_misspelt_option_group_or_key_prints_one_line_with_the_suggestion(tmp_path: Path, override: str, expected: str) -> None:
    proc = run_cli([override, "--cfg=job"], tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(expected), proc.stderr
    assert "Available options" not in proc.stderr + proc.stdout and proc.stdout == ""


def test_help_still_lists_every_option(tmp_path: Path) -> None:
    proc = run_cli(["--help"], tmp_path)
    assert proc.returncode == 0
    assert "mutag" in proc.stdout and "gatv2" in proc.stdout
