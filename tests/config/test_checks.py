"""``check_config``: every key whose value its schema refuses (graphbench.config.schema), a CUDA accelerator
without a GPU and a malformed recipe card, named in one message with what is valid; dataset.num_workers, the one
dataset key of the former table, is checked by the DataModule (tests/data/datamodules/test_base.py)."""

from __future__ import annotations

import pytest
from hydra import compose
from omegaconf import OmegaConf, open_dict

from graphbench.config.checks import accelerator_problems, check_config
from graphbench.vocabulary.errors import ConfigError


def test_a_composed_config_passes_and_a_node_it_lacks_is_not_checked(hydra_conf: None) -> None:
    cfg = compose("config", overrides=["seed=-3", "model.num_layers=0", "budget=none", "trainer.max_epochs=-1"])
    check_config(cfg)  # raises nothing
    with open_dict(cfg):
        del cfg["pe"], cfg["budget"]
    check_config(cfg)


def test_every_wrong_value_is_named_in_one_message_in_the_order_of_the_schemas(hydra_conf: None) -> None:
    overrides = ["seed=1.5", "model.hidden_dim=0", "model.dropout=1.0", "model.residual=1", "trainer.max_epochs=0"]
    with pytest.raises(ConfigError) as err:
        check_config(compose("config", overrides=overrides))
    assert str(err.value) == (
        "invalid config: seed=1.5 must be an integer; model.hidden_dim=0 must be a positive integer; "
        "model.dropout=1.0 must be a number in [0, 1); model.residual=1 must be true or false; "
        "trainer.max_epochs=0 must be an integer >= 1 (or -1: no limit)"
    )


def test_a_boolean_is_not_an_integer(hydra_conf: None) -> None:
    with pytest.raises(ConfigError, match=r"^invalid config: model.hidden_dim=True must be a positive integer$"):
        check_config(compose("config", overrides=["model.hidden_dim=true"]))


#: every check of the former CHECKED_KEYS table, with a value it refuses and the line it gives
FORMER_TABLE: list[tuple[str, str]] = [
    ("seed=abc", "seed='abc' must be an integer"),
    ("checkpoint_every_s=-5", "checkpoint_every_s=-5 must be a non-negative number of seconds"),
    ("model.hidden_dim=-1", "model.hidden_dim=-1 must be a positive integer"),
    ("model.num_layers=-1", "model.num_layers=-1 must be a non-negative integer"),
    ("model.dropout=-0.5", "model.dropout=-0.5 must be a number in [0, 1)"),
    ("model.residual=yes", "model.residual='yes' must be true or false"),
    ("model.compile=1", "model.compile=1 must be true or false"),
    ("speedups.enabled=maybe", "speedups.enabled='maybe' must be true or false"),
    ("head.num_layers=0", "head.num_layers=0 must be a positive integer"),
    ("optimizer.lr=-0.1", "optimizer.lr=-0.1 must be a positive number"),
    ("optimizer.weight_decay=-1", "optimizer.weight_decay=-1 must be a non-negative number"),
    ("budget.max_params=-100", "budget.max_params=-100 must be a positive integer or null"),
    ("trainer.max_epochs=-2", "trainer.max_epochs=-2 must be an integer >= 1 (or -1: no limit)"),
    ("trainer.check_val_every_n_epoch=0", "trainer.check_val_every_n_epoch=0 must be a positive integer or null"),
]


@pytest.mark.parametrize(("override", "line"), FORMER_TABLE)
def test_every_check_of_the_former_table_still_fires(hydra_conf: None, override: str, line: str) -> None:
    with pytest.raises(ConfigError) as err:
        check_config(compose("config", overrides=[override]))
    assert str(err.value) == f"invalid config: {line}"


def test_a_well_formed_recipe_card_passes_and_each_malformed_part_is_named() -> None:
    run = {"seed": 0, "checkpoint_every_s": 30}  # the top-level keys every config has
    deviation = {"key": "model.init", "source": "grand", "ours": "default", "why": "one sentence", "effect": None}
    check_config(
        OmegaConf.create({**run, "recipe_card": {"source": "THUDM/GRAND@7a2fd6e run_cora.sh", "deviations": [deviation]}})
    )
    check_config(OmegaConf.create({**run, "recipe_card": None}))
    bad = {"source": "", "deviations": [{**deviation, "why": ""}, {"key": "x"}, {**deviation, "effect": 0.1}]}
    with pytest.raises(ConfigError) as err:
        check_config(OmegaConf.create({**run, "recipe_card": bad}))
    assert str(err.value) == (
        "invalid config: recipe_card.source='' must be a non-empty string; recipe_card.deviations[0].why='' must be "
        "a non-empty string; recipe_card.deviations[1] must have exactly the keys key, source, ours, why, effect, got "
        "['key']; recipe_card.deviations[2].effect=0.1 must be a string or null"
    )
    with pytest.raises(ConfigError, match=r"recipe_card must have exactly the keys deviations and source, got \['source'\]"):
        check_config(OmegaConf.create({**run, "recipe_card": {"source": "paper"}}))


def test_a_cuda_accelerator_without_a_cuda_gpu_names_the_cpu_trainers() -> None:
    (problem,) = accelerator_problems("gpu", cuda_available=False)
    assert problem == (
        "trainer.accelerator=gpu needs a CUDA GPU and torch sees none here (torch.cuda.is_available() is false): "
        "train on the CPU with trainer=cpu (trainer=ddp_cpu for data parallel), or use trainer=default, whose "
        "accelerator=auto takes the GPU where there is one"
    )
    assert accelerator_problems("CUDA", cuda_available=False)[0].startswith("trainer.accelerator=CUDA needs a CUDA GPU")
    assert accelerator_problems("gpu", cuda_available=True) == []
    for accelerator in ("auto", "cpu", None):
        assert accelerator_problems(accelerator, cuda_available=False) == []
