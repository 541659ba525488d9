"""Hydra sweep overrides -> W&B parameters, the sweep dict and W&B's validator (no composition)."""

from __future__ import annotations

import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import QuotedString, Transformer

from graphbench.sweep.wandb import (
    COMMAND,
    SweepError,
    agent_arguments,
    parameters_from_overrides,
    parse_override,
    sweep_config,
    to_yaml,
    validate,
)


@pytest.mark.parametrize(
    ("override", "name", "spec"),
    [
        ("model=gcn", "model", {"value": "gcn"}),
        ("optimizer.lr=0.01", "optimizer.lr", {"value": 0.01}),
        ("model.num_layers=4", "model.num_layers", {"value": 4}),
        ("trainer.deterministic=true", "trainer.deterministic", {"value": True}),
        ("model.pooling=null", "model.pooling", {"value": "null"}),
        ("dataset.other_lengths=[4,5]", "dataset.other_lengths", {"value": "[4,5]"}),
        ("++trainer.limit_train_batches=10", "++trainer.limit_train_batches", {"value": 10}),
        ("model=gcn,gine", "model", {"values": ["gcn", "gine"]}),
        ("model.hidden_dim=choice(32, 64, 128)", "model.hidden_dim", {"values": [32, 64, 128]}),
        ("x=null,[1,2],'a b',true,1e-3", "x", {"values": ["null", "[1,2]", "'a b'", True, 0.001]}),
        ("model.dropout=shuffle(0.1, 0.2)", "model.dropout", {"values": [0.1, 0.2]}),
        ("model.num_layers=range(2,6)", "model.num_layers", {"values": [2, 3, 4, 5]}),
        ("model.num_layers=range(2, 10, 3)", "model.num_layers", {"values": [2, 5, 8]}),
        ("model.dropout=range(0.1,0.5,0.1)", "model.dropout", {"values": [0.1, 0.2, 0.3, 0.4]}),
        ("model.dropout=interval(0, 0.5)", "model.dropout", {"distribution": "uniform", "min": 0.0, "max": 0.5}),
        (
            "optimizer.lr=tag(log, interval(1e-4, 1e-2))",
            "optimizer.lr",
            {"distribution": "log_uniform_values", "min": 0.0001, "max": 0.01},
        ),
        ("model@foo=gcn,gat", "model@foo", {"values": ["gcn", "gat"]}),
    ],
)
def test_override_becomes_wandb_parameter(override: str, name: str, spec: dict) -> None:
    assert parse_override(override) == (name, spec)


def test_agent_arguments_parse_back_to_the_swept_values() -> None:
    """W&B's agent passes f"{name}={value}": Hydra must read back exactly the element that was swept."""
    text = "x=null,[1,2],'a b',true,1e-3,gcn,'x,y'"
    parser = OverridesParser.create()
    swept = [
        x.text if isinstance(x, QuotedString) else x
        for x in parser.parse_override(text).sweep_iterator(transformer=Transformer.identity)
    ]
    name, spec = parse_override(text)
    back = [parser.parse_override(f"{name}={value}").value() for value in spec["values"]]
    assert back == swept


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("~model.dropout", "can only set keys"),
        ("++model=gcn", "write model=gcn"),
        ("+model=gcn", "does not select a config group"),
        ("a=glob(*)", "Glob is not a W&B parameter; valid forms: key=value, key=a,b,c, key=choice(a,b,c)"),
        ("a=interval(1,2", "cannot parse 'a=interval(1,2'"),
        ("a=tag(lg, interval(1, 2))", "unknown tag ['lg']; only tag(log, interval(low,high))"),
        ("a=interval(2, 1)", "needs low < high"),
        ("a=tag(log, interval(0, 1))", "needs 0 < low"),
        ("a=range(5, 1)", "is empty"),
        ("a=interval(1,2),3", "a choice of sweeps is not a W&B parameter"),
    ],
)
def test_bad_override_gives_one_line_naming_the_fix(override: str, message: str) -> None:
    with pytest.raises(SweepError) as info:
        parse_override(override, groups={"model"})
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_last_override_of_a_key_counts_as_in_hydra() -> None:
    assert parameters_from_overrides(["model=gcn,gine", "seed=0", "model=gat"]) == {
        "seed": {"value": 0},
        "model": {"value": "gat"},
    }


def test_first_grid_point_as_the_agent_writes_it() -> None:
    parameters = parameters_from_overrides(["model=gcn,gine", "optimizer.lr=tag(log, interval(1e-4, 1e-2))", "seed=3"])
    assert agent_arguments(parameters) == ["model=gcn", "optimizer.lr=0.0001", "seed=3"]


def test_sweep_config_is_exact_and_valid() -> None:
    parameters = parameters_from_overrides(["model=gcn,gine", "seed=0,1"])
    sweep = sweep_config(parameters, metric="val/mae", maximize=False, name="zinc", project="graphbench")
    assert sweep == {
        "name": "zinc",
        "project": "graphbench",
        "program": "run.py",
        "method": "grid",
        "metric": {"name": "val/mae", "goal": "minimize"},
        "parameters": {"model": {"values": ["gcn", "gine"]}, "seed": {"values": [0, 1]}},
        "command": ["${env}", "${interpreter}", "${program}", "${args_no_hyphens}"],
    }
    assert COMMAND == sweep["command"]
    validate(sweep)
    assert to_yaml(sweep).startswith("name: zinc\nproject: graphbench\nprogram: run.py\nmethod: grid\n")


@pytest.mark.parametrize("method", ["random", "bayes"])
def test_distributions_make_a_valid_random_or_bayes_sweep(method: str) -> None:
    parameters = parameters_from_overrides(
        ["optimizer.lr=tag(log, interval(1e-4, 1e-2))", "model.dropout=interval(0, 0.5)", "model=gcn,gine"]
    )
    assert sweep_config(parameters, metric="val/ap", maximize=True)["method"] == "random"  # the default with intervals
    sweep = sweep_config(parameters, metric="val/ap", maximize=True, method=method)
    assert sweep["metric"] == {"name": "val/ap", "goal": "maximize"}
    validate(sweep)


def test_grid_of_an_interval_names_the_fix() -> None:
    parameters = parameters_from_overrides(["model.dropout=interval(0, 0.5)"])
    with pytest.raises(SweepError, match=r"\['model.dropout'\] are intervals: use choice/range, or method random or bayes"):
        sweep_config(parameters, metric="val/ap", maximize=True, method="grid")


def test_empty_sweep_and_unknown_method_are_refused() -> None:
    with pytest.raises(SweepError, match="nothing to sweep"):
        sweep_config({}, metric="val/ap", maximize=True)
    with pytest.raises(SweepError, match=r"method 'hyperband' is not one of \['grid', 'random', 'bayes'\]"):
        sweep_config({"seed": {"values": [0, 1]}}, metric="val/ap", maximize=True, method="hyperband")


def test_validator_rejects_what_wandb_would_reject() -> None:
    sweep = sweep_config({"seed": {"values": [0, 1]}}, metric="val/ap", maximize=True)
    sweep["parameters"]["lr"] = {"distribution": "log_uniform_values", "min": 0.1, "max": 0.01}
    with pytest.raises(SweepError, match=r"W&B rejects this sweep: .*min"):
        validate(sweep)
