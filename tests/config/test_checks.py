"""``check_config``: every checked key whose value is wrong, named in one message with what is valid."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from graphbench.config.checks import accelerator_problems, check_config
from graphbench.run.errors import ConfigError


def test_valid_values_and_absent_keys_pass() -> None:
    cfg = OmegaConf.create(
        {
            "seed": -3,
            "model": {"hidden_dim": 4, "num_layers": 0, "dropout": 0.0, "residual": False},
            "budget": {"max_params": None},
            "trainer": {"max_epochs": -1, "check_val_every_n_epoch": None},
        }
    )
    check_config(cfg)  # raises nothing: only keys that are present are checked


def test_every_wrong_value_is_named_in_one_message_in_the_order_of_the_checks() -> None:
    cfg = OmegaConf.create(
        {
            "seed": 1.5,
            "model": {"hidden_dim": 0, "dropout": 1.0, "residual": 1},
            "optimizer": {"lr": 0.01},
            "trainer": {"max_epochs": 0},
        }
    )
    with pytest.raises(ConfigError) as err:
        check_config(cfg)
    assert str(err.value) == (
        "invalid config: seed=1.5 must be an integer; model.hidden_dim=0 must be a positive integer; "
        "model.dropout=1.0 must be a number in [0, 1); model.residual=1 must be true or false; "
        "trainer.max_epochs=0 must be an integer >= 1 (or -1: no limit)"
    )


def test_a_boolean_is_not_an_integer() -> None:
    with pytest.raises(ConfigError, match=r"^invalid config: model.hidden_dim=True must be a positive integer$"):
        check_config(OmegaConf.create({"model": {"hidden_dim": True}}))


def test_a_well_formed_recipe_card_passes_and_each_malformed_part_is_named() -> None:
    deviation = {"key": "model.init", "source": "grand", "ours": "default", "why": "one sentence", "effect": None}
    check_config(OmegaConf.create({"recipe_card": {"source": "THUDM/GRAND@7a2fd6e run_cora.sh", "deviations": [deviation]}}))
    check_config(OmegaConf.create({"recipe_card": None}))
    bad = {"source": "", "deviations": [{**deviation, "why": ""}, {"key": "x"}, {**deviation, "effect": 0.1}]}
    with pytest.raises(ConfigError) as err:
        check_config(OmegaConf.create({"recipe_card": bad}))
    assert str(err.value) == (
        "invalid config: recipe_card.source='' must be a non-empty string; recipe_card.deviations[0].why='' must be "
        "a non-empty string; recipe_card.deviations[1] must have exactly the keys key, source, ours, why, effect, got "
        "['key']; recipe_card.deviations[2].effect=0.1 must be a string or null"
    )
    with pytest.raises(ConfigError, match=r"recipe_card must have exactly the keys deviations and source, got \['source'\]"):
        check_config(OmegaConf.create({"recipe_card": {"source": "paper"}}))


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
