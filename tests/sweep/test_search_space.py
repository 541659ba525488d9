"""SearchSpace: Hydra's sweep syntax as Optuna distributions, the other overrides passed through as
written, the command line winning over the file, and a trial's overrides read back by Hydra's parser."""

from __future__ import annotations

import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

from graphbench.sweep.search_space import SearchSpace, format_value, params_overrides
from graphbench.sweep.wandb import SweepError


def test_each_sweep_form_becomes_its_distribution() -> None:
    space = SearchSpace.parse(
        [
            "optimizer.lr=tag(log, interval(1e-4, 1e-2))",
            "optimizer.weight_decay=choice(0.0, 1e-5, 1e-4)",
            "model=gcn,gine",
            "model.num_layers=range(2,6)",
            "model.hidden_dim=range(16,80,32)",
            "model.dropout=interval(0, 0.5)",
            "dataset.frac=range(0.25,1.0,0.25)",
        ]
    )
    assert space.distributions == {
        "optimizer.lr": FloatDistribution(1e-4, 1e-2, log=True),
        "optimizer.weight_decay": CategoricalDistribution([0.0, 1e-5, 1e-4]),
        "model": CategoricalDistribution(["gcn", "gine"]),
        "model.num_layers": IntDistribution(2, 5),  # stop excluded, as in Hydra
        "model.hidden_dim": IntDistribution(16, 48, step=32),
        "model.dropout": FloatDistribution(0.0, 0.5),
        "dataset.frac": FloatDistribution(0.25, 0.75, step=0.25),
    }
    assert space.fixed == []


def test_fixed_overrides_pass_as_written_and_the_command_line_wins() -> None:
    file = params_overrides({"model.hidden_dim": "choice(32, 64)", "model.dropout": "interval(0, 0.3)"})
    space = SearchSpace.parse([*file, "model.hidden_dim=32", "+trainer.max_time=00:00:10:00", "~callbacks.ntk", "seed=3"])
    assert list(space.distributions) == ["model.dropout"]
    assert space.fixed == ["model.hidden_dim=32", "+trainer.max_time=00:00:10:00", "~callbacks.ntk", "seed=3"]
    swept = SearchSpace.parse([*file, "model.hidden_dim=16,128"])  # a sweep on the command line replaces the file's
    assert swept.distributions["model.hidden_dim"] == CategoricalDistribution([16, 128])


def test_a_trials_overrides_parse_back_to_its_values() -> None:
    space = SearchSpace.parse(["a=choice(true,false)", "b=interval(0,1)", "c=choice(x,'y z')", "d=range(1,3)", "e=7"])
    params = {"a": False, "b": 0.1 + 0.2, "c": "y z", "d": 2}
    overrides = space.overrides({**params, "c": space.distributions["c"].choices[1]})
    parsed = {o.get_key_element(): o.value() for o in OverridesParser.create().parse_overrides(overrides)}
    assert parsed == {"e": 7, "a": False, "b": 0.30000000000000004, "c": "y z", "d": 2}
    assert format_value(None) == "null"


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("a=interval(1,1)", r"interval\(low,high\) needs low < high"),
        ("a=tag(log, interval(0,1))", "a log-uniform interval needs 0 < low"),
        ("a=tag(int, interval(1,2))", r"unknown tag \['int'\]"),
        ("a=range(5,1)", r"is empty \(range stops before it starts\)"),
        ("a=glob(*)", "not an Optuna search space"),
        ("a=choice(", "cannot parse the search space"),
    ],
)
def test_what_optuna_cannot_sample_is_one_line(override: str, message: str) -> None:
    with pytest.raises(SweepError, match=message):
        SearchSpace.parse([override])
