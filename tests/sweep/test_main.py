"""python -m graphbench.sweep wandb: composes conf/ for the metric and the search space, writes a valid sweep."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest
import yaml

from graphbench.sweep.__main__ import RUN_DIR, main
from tests.paths import CONF

COMMAND = ["${env}", "${interpreter}", "${program}", "${args_no_hyphens}"]


def generate(tmp_path: Path, *args: str, config_dir: Path = CONF) -> dict:
    out = tmp_path / "sweep.yaml"
    assert main(["wandb", "--config-dir", str(config_dir), *args, "-o", str(out)]) == 0
    return yaml.safe_load(out.read_text())


def wandb_accepts(sweep: dict) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from sweeps import SweepConfig
    SweepConfig(sweep)  # W&B's own validator raises on any violation


def test_overrides_become_a_validated_sweep(tmp_path: Path) -> None:
    sweep = generate(tmp_path, "model=gcn,gine", "optimizer.lr=tag(log, interval(1e-4, 1e-2))", "seed=0,1", "--name", "cycles-lr")
    assert sweep == {
        "name": "cycles-lr",
        "project": "graphbench",
        "program": "run.py",
        "method": "random",
        "metric": {"name": "val/accuracy", "goal": "maximize"},
        "parameters": {
            "model": {"values": ["gcn", "gine"]},
            "optimizer.lr": {"distribution": "log_uniform_values", "min": 0.0001, "max": 0.01},
            "seed": {"values": [0, 1]},
            "logger": {"value": "wandb"},
            "hydra.run.dir": {"value": RUN_DIR},
        },
        "command": COMMAND,
    }
    wandb_accepts(sweep)


def test_metric_and_direction_come_from_the_dataset(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wandb", "--config-dir", str(CONF), "dataset=zinc", "model=gcn,gine", "logger.wandb.project=zinc-study"]) == 0
    sweep = yaml.safe_load(capsys.readouterr().out)
    assert sweep["metric"] == {"name": "val/mae", "goal": "minimize"}
    assert sweep["method"] == "grid"
    assert sweep["project"] == "zinc-study"  # the runs log where the sweep lives
    assert sweep["parameters"]["dataset"] == {"value": "zinc"}
    wandb_accepts(sweep)


def test_hparams_search_file_gives_its_search_space(tmp_path: Path) -> None:
    by_name = generate(tmp_path, "hparams_search=cycles_optuna", "--method", "bayes")
    by_path = generate(tmp_path, str(CONF / "hparams_search" / "cycles_optuna.yaml"), "--method", "bayes")
    assert by_name == by_path
    assert by_name["method"] == "bayes"
    assert by_name["metric"] == {"name": "val/accuracy", "goal": "maximize"}
    assert by_name["parameters"] == {
        "optimizer.lr": {"distribution": "log_uniform_values", "min": 0.0001, "max": 0.01},
        "optimizer.weight_decay": {"values": [0.0, 1e-05, 0.0001]},
        "model.hidden_dim": {"values": [32, 64, 128]},
        "model.num_layers": {"values": [2, 3, 4, 5]},
        "model.dropout": {"distribution": "uniform", "min": 0.0, "max": 0.3},
        "logger": {"value": "wandb"},
        "hydra.run.dir": {"value": RUN_DIR},
    }  # the file's dataset and model are the defaults: its runs need no hparams_search=...
    wandb_accepts(by_name)
    fixed = generate(tmp_path, "hparams_search=cycles_optuna", "model.hidden_dim=16")  # the command line wins
    assert fixed["parameters"]["model.hidden_dim"] == {"value": 16}


def test_search_file_that_changes_the_config_is_passed_to_every_run(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    shutil.copytree(CONF, conf)
    (conf / "hparams_search" / "short.yaml").write_text(
        "# @package _global_\ntrainer:\n  max_epochs: 3\nhydra:\n  sweeper:\n    params:\n      seed: 0,1\n"
    )
    sweep = generate(tmp_path, "hparams_search=short", config_dir=conf)
    assert sweep["parameters"]["seed"] == {"values": [0, 1]}
    assert sweep["parameters"]["hparams_search"] == {"value": "short"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["dataset=cycles,zinc"], "the swept datasets optimize different metrics"),
        (["model=gcn,transformer9000"], "model=transformer9000: no such model; the options: appnp, gat, gatedgcn, "),
        (["model.widht=8,16"], "model.widht: no such key; model's keys: activation, "),
        (["model=gcn,gine", "logger=csv"], "the runs of a W&B sweep must log to W&B"),
        (["model.dropout=interval(0.5)"], "cannot parse 'model.dropout=interval(0.5)'"),
        (["hparams_search=cycles_optuna", "hparams_search=cycles_optuna_sqlite"], "give one hparams_search"),
        (["README.md"], "cannot parse 'README.md'"),
    ],
)
def test_bad_argument_exits_2_with_one_line(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as info:
        main(["wandb", "--config-dir", str(CONF), *args])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert message in err


def test_missing_config_dir_names_the_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["wandb", "--config-dir", str(tmp_path), "seed=0,1"])
    assert "run from the repository root or pass --config-dir" in capsys.readouterr().err
