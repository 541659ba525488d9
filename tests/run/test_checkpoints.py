"""graphbench.run.checkpoints: reading a checkpoint given as input, its network config, loading its weights."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from omegaconf import OmegaConf
from torch import nn

from graphbench.run.checkpoints import (
    check_checkpoint_file,
    checkpoint_config,
    load_network_weights,
    network_from_checkpoint,
    network_overrides,
    override_key,
    read_checkpoint,
)
from graphbench.vocabulary.errors import ConfigError


def test_missing_unreadable_and_foreign_files_fail_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"ckpt_path=.*nope.ckpt is not a file: give the checkpoint of a run") as missing:
        check_checkpoint_file(tmp_path / "nope.ckpt")
    garbage = tmp_path / "garbage.ckpt"
    garbage.write_bytes(b"not a pickle at all")
    with pytest.raises(ConfigError, match=r"garbage.ckpt is not a readable checkpoint \(") as unreadable:
        read_checkpoint(garbage)
    foreign = tmp_path / "foreign.ckpt"
    torch.save({"weights": torch.zeros(2)}, foreign)
    with pytest.raises(ConfigError, match=r"foreign.ckpt is not a Lightning checkpoint \(no state_dict\)") as not_lightning:
        read_checkpoint(foreign)
    for error in (missing, unreadable, not_lightning):
        assert "\n" not in str(error.value)


def test_checkpoint_config_is_the_saved_hyperparameter() -> None:
    assert checkpoint_config({"state_dict": {}, "hyper_parameters": {"config": {"seed": 3}}}) == {"seed": 3}
    assert checkpoint_config({"state_dict": {}}) is None
    assert checkpoint_config({"state_dict": {}, "hyper_parameters": {"config": None}}) is None


def test_network_overrides_are_the_network_keys_a_command_line_sets() -> None:
    assert override_key("++model.hidden_dim=16") == "model.hidden_dim"
    assert override_key("~pe") == "pe"
    overrides = ["++model.hidden_dim=16", "model=gcn", "seed=1", "model.compile=true", "~pe", "dataset=texas", "head.dropout=0.1"]
    assert network_overrides(overrides) == ["model.hidden_dim", "model.name", "pe.name", "head.dropout"]


def _groups(model: dict, compile_: bool = False) -> dict:
    return {
        "model": {**model, "compile": compile_},
        "head": {"name": "linear", "num_layers": 1},
        "pe": {"name": "none"},
        "normalization": {"name": "none"},
        "budget": {"name": "none", "max_params": None},
    }


def test_the_network_comes_from_the_checkpoint_and_how_it_runs_from_the_command_line() -> None:
    saved = {**_groups({"name": "gcn", "hidden_dim": 16}), "seed": 0}
    cfg = OmegaConf.create({**_groups({"name": "gine", "hidden_dim": 64}, compile_=True), "seed": 5})
    merged = network_from_checkpoint(cfg, saved, overrides=[], path="a.ckpt")
    assert OmegaConf.to_container(merged.model) == {"name": "gcn", "hidden_dim": 16, "compile": True}
    assert merged.seed == 5  # everything but the network stays the command line's
    # restating the checkpoint's model is fine, and its width is the checkpoint's
    same = OmegaConf.create(_groups({"name": "gcn", "hidden_dim": 64}))
    assert network_from_checkpoint(same, saved, overrides=["model=gcn"], path="a.ckpt").model.hidden_dim == 16


def test_a_command_line_contradicting_the_checkpoint_fails_in_one_line() -> None:
    saved = _groups({"name": "gcn", "hidden_dim": 16})
    cfg = OmegaConf.create(_groups({"name": "gine", "hidden_dim": 64}))
    with pytest.raises(ConfigError) as error:
        network_from_checkpoint(cfg, saved, overrides=["model=gine", "model.hidden_dim=64"], path="a.ckpt")
    assert str(error.value) == (
        "ckpt_path=a.ckpt holds another network than the command line asks for: model.name='gine' (the checkpoint's: "
        "'gcn'); model.hidden_dim=64 (the checkpoint's: 16); drop those overrides (task=eval rebuilds the network from "
        "the checkpoint)"
    )
    with pytest.raises(ConfigError, match="its config has no budget group: it is not a graphbench checkpoint"):
        network_from_checkpoint(cfg, {k: v for k, v in saved.items() if k != "budget"}, overrides=[], path="a.ckpt")


def test_network_weights_load_strictly_and_a_misfit_is_named() -> None:
    torch.manual_seed(0)
    source = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
    checkpoint = {
        "state_dict": {
            **{f"network.{k}": v for k, v in source.state_dict().items()},
            "val_best.max_val": torch.tensor(0.5),  # the module's own state: never loaded into the network
        }
    }
    target = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
    load_network_weights(target, checkpoint, "a.ckpt")
    for key, value in source.state_dict().items():
        assert torch.equal(target.state_dict()[key], value)
    wider = nn.Sequential(nn.Linear(4, 2), nn.ReLU(), nn.Linear(2, 1))
    with pytest.raises(ConfigError) as error:
        load_network_weights(wider, checkpoint, "a.ckpt")
    assert str(error.value).startswith(
        "ckpt_path=a.ckpt does not fit the network built here: 0.weight: (2, 3) in the checkpoint, (2, 4) here; the model"
    )
    with pytest.raises(ConfigError, match="holds no network weights"):
        load_network_weights(target, {"state_dict": {"val_best.max_val": torch.tensor(0.5)}}, "a.ckpt")
