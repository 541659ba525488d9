"""A mistyped command line ends in one line naming the closest valid names, or every valid one when
none is close; a new key is offered only where the built object takes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphbench.run.config_errors import did_you_mean, missing_option_message, target_arguments, unknown_key_message
from tests.e2e.test_cli import run_cli


def test_did_you_mean_names_the_close_names_only() -> None:
    assert did_you_mean("mutg", ["mutag", "zinc", "cora"]) == " (did you mean mutag?)"
    assert did_you_mean("zzzz", ["mutag", "zinc", "cora"]) == ""
    assert missing_option_message("model", "gcnn", ["gat", "gcn"]) == (
        "model=gcnn: no such model (did you mean gcn?); --help lists every group's options"
    )
    assert unknown_key_message("trainer.max_epoch", ["max_epochs", "devices"]) == (
        "trainer.max_epoch: no such key (did you mean trainer.max_epochs?); --help lists every group's options"
    )


def test_with_no_close_name_every_valid_one_is_on_the_line() -> None:
    assert missing_option_message("head", "deep", ["mlp3", "dot", "linear", "mlp2"]) == (
        "head=deep: no such head; the options: dot, linear, mlp2, mlp3; --help lists every group's options"
    )
    assert unknown_key_message("trainer.zzz", ["devices", "max_epochs"], ["max_epochs", "devices"]) == (
        "trainer.zzz: no such key; trainer's keys: devices, max_epochs; --help lists every group's options"
    )
    assert unknown_key_message("zzz", ["seed", "model"], ["seed", "model"]) == (
        "zzz: no such config group or key; the groups and keys: model, seed; --help lists every group's options"
    )


def test_a_new_key_is_offered_only_as_an_argument_of_the_nodes_target() -> None:
    assert unknown_key_message("trainer.accumulate_grad_batches", ["accumulate_grad_batches"], [], "lightning.Trainer") == (
        "trainer.accumulate_grad_batches: no such key; ++trainer.accumulate_grad_batches=<value> passes it to "
        "lightning.Trainer; --help lists every group's options"
    )
    assert "+" not in unknown_key_message("trainer.max_epoch", ["max_epochs"], ["max_epochs"])
    names, any_keyword = target_arguments("lightning.Trainer")
    assert "max_epochs" in names and "accumulate_grad_batches" in names and "max_epoch" not in names and not any_keyword
    assert target_arguments("no.such.module.Thing") == ([], False)


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


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        # a close key: only the suggestion, no "+key" that the Trainer would refuse
        ("trainer.max_epoch=3", "error: trainer.max_epoch: no such key (did you mean trainer.max_epochs or "),
        (
            "trainer.accumulate_grad_batches=2",
            "error: trainer.accumulate_grad_batches: no such key; ++trainer.accumulate_grad_batches",
        ),
        ("dataset=no-such-dataset", "error: dataset=no-such-dataset: no such dataset; the options: actor, aids, "),
    ],
)
def test_every_suggestion_on_the_line_is_one_that_works(tmp_path: Path, override: str, expected: str) -> None:
    proc = run_cli([override, "--cfg=job"], tmp_path)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and proc.stderr.startswith(expected), proc.stderr
    assert "+trainer.max_epoch" not in proc.stderr
    if override.startswith("dataset="):
        assert "cycles, " in proc.stderr and "peptides-func, " in proc.stderr and "zinc-full;" in proc.stderr
    if override.startswith("trainer.accumulate"):  # the override the line names composes
        followed = run_cli(["++trainer.accumulate_grad_batches=2", "--cfg=job"], tmp_path)
        assert followed.returncode == 0 and "accumulate_grad_batches: 2" in followed.stdout
