"""The schemas of the model, head, pe, budget, trainer, optimizer and speedups nodes and the top-level keys:
every option file of conf/ composes to a node its schema takes, and a wrong key or value is one line naming
the key, the bad value and what is valid."""

from __future__ import annotations

import inspect
from dataclasses import fields

import pytest
from hydra import compose
from omegaconf import DictConfig, OmegaConf

from graphbench.config.checks import schema_problems
from graphbench.config.schema import (
    SCHEMAS,
    BudgetConfig,
    HeadConfig,
    ModelConfig,
    PEConfig,
    TrainerConfig,
    defaults,
    expected,
    problems,
    valid,
)
from graphbench.modules.heads import MLPHead
from graphbench.modules.network import GraphNetwork
from tests.paths import CONF

#: the groups whose every option file is held against its schema
GROUPS: tuple[str, ...] = ("model", "head", "pe", "budget", "trainer", "optimizer", "speedups")


def composed(overrides: list[str]) -> DictConfig:
    """The config ``conf/config.yaml`` composes with ``overrides`` (the checks of the former CHECKED_KEYS
    table are in tests/config/test_checks.py)."""
    return compose("config", overrides=overrides)


@pytest.mark.parametrize(
    ("group", "option"), [(group, path.stem) for group in GROUPS for path in sorted((CONF / group).glob("*.yaml"))]
)
def test_every_option_file_composes_to_a_node_its_schema_takes(hydra_conf: None, group: str, option: str) -> None:
    cfg = composed([f"{group}={option}"])
    assert schema_problems(cfg) == []
    values = OmegaConf.to_container(cfg[group], resolve=True)
    assert isinstance(values, dict)
    if SCHEMAS[group].closed:  # type: ignore[attr-defined]
        assert set(values) - {"_target_", "_partial_"} <= {f.name for f in fields(SCHEMAS[group])}


@pytest.mark.parametrize("dataset", sorted(path.stem for path in (CONF / "dataset").glob("*.yaml")))
def test_every_dataset_with_its_recipe_composes_to_nodes_their_schemas_take(hydra_conf: None, dataset: str) -> None:
    """A dataset YAML chooses groups and its recipe (conf/recipe/) sets their values: the schemas take them."""
    assert schema_problems(composed([f"dataset={dataset}"])) == []


def test_every_group_with_options_has_its_schema() -> None:
    for group in GROUPS:
        assert group in SCHEMAS and list((CONF / group).glob("*.yaml")), group


@pytest.mark.parametrize(
    ("override", "line"),
    [
        ("model.compile=yes", "model.compile='yes' must be true or false"),
        ("model.width_multiple=0", "model.width_multiple=0 must be a positive integer"),
        ("+model.input_dropout=-0.1", "model.input_dropout=-0.1 must be a number in [0, 1)"),
        ("+model.hiden_dim=8", "model.hiden_dim is not a key of model (did you mean model.hidden_dim?); its keys: "),
        ("head.dropout=abc", "head.dropout='abc' must be a number in [0, 1)"),
        ("+head.l2_normalise=true", "head.l2_normalise is not a key of head (did you mean head.l2_normalize?)"),
        ("pe=lappe pe.k=0", "pe.k=0 must be a positive integer or null"),
        ("pe=rwse pe.concat_dim=-2", "pe.concat_dim=-2 must be a positive integer or null"),
        ("budget.max_params=1.5", "budget.max_params=1.5 must be a positive integer or null"),
        ("trainer.log_every_n_steps=0", "trainer.log_every_n_steps=0 must be a positive integer"),
        ("optimizer.weight_decay=-1e-4", "optimizer.weight_decay=-0.0001 must be a non-negative number"),
    ],
)
def test_a_wrong_key_or_value_is_one_line_naming_it_and_what_is_valid(hydra_conf: None, override: str, line: str) -> None:
    (found,) = schema_problems(composed(override.split()))
    assert found.startswith(line), found
    assert "\n" not in found


def test_a_boolean_is_not_a_number_and_an_integer_is_a_number() -> None:
    assert not valid(True, int, None) and not valid(False, float, None)
    assert valid(3, float, None) and not valid(3.0, int, None)
    assert valid(None, int | None, None) and not valid("x", int | None, None)
    assert expected(int | None, None) == "an integer or null"
    assert expected(float, None) == "a number"
    assert expected(bool | str, None) == "true or false or a string"


def test_a_missing_key_every_node_has_is_named_with_what_it_takes() -> None:
    assert problems({"name": "100k"}, BudgetConfig, "budget") == [
        "budget.max_params is missing: every budget node has it (a positive integer or null)"
    ]


def test_an_open_schema_takes_keys_it_does_not_name() -> None:
    node = {"max_epochs": 2, "check_val_every_n_epoch": 1, "accelerator": "cpu", "log_every_n_steps": 5}
    node |= {"enable_progress_bar": "auto", "accumulate_grad_batches": 4}
    assert problems(node, TrainerConfig, "trainer") == []


def test_the_schemas_defaults_are_the_constructors_defaults() -> None:
    """A key a node leaves out means the same to the schema and to the class its node builds."""
    network = inspect.signature(GraphNetwork).parameters
    for key, value in defaults(ModelConfig).items():
        if key in network:
            assert network[key].default == value, key
    head = inspect.signature(MLPHead).parameters
    for key, value in defaults(HeadConfig).items():
        assert head[key].default == value, key


def test_every_model_key_without_a_default_is_in_every_model_file_or_shared(hydra_conf: None) -> None:
    """The keys every composed model node has: set by each model file or by conf/config.yaml's model node."""
    required = [f.name for f in fields(ModelConfig) if f.name not in defaults(ModelConfig)]
    shared = OmegaConf.load(CONF / "config.yaml").model
    for path in (CONF / "model").glob("*.yaml"):
        node = OmegaConf.load(path)
        assert all(key in node or key in shared for key in required), path
    assert set(defaults(PEConfig)) == {"k", "lappe_k", "rwse_k", "laplacian", "keep_trivial", "concat_dim"}
