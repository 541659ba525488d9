"""graphbench.run.naming: W&B group names from Hydra overrides, and the config keys derived from the seed."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import pytest
from omegaconf import DictConfig, OmegaConf

from graphbench.run.naming import (
    MAX_GROUP_LENGTH,
    is_naming_override,
    run_group_from_overrides,
    seed_dependent_keys,
)


def test_group_drops_seed_and_locations_and_sorts() -> None:
    overrides = ["model=gcn", "optimizer.lr=0.01", "seed=3", "paths.data_dir=../shared/data"]
    assert run_group_from_overrides(overrides) == "model=gcn,optimizer.lr=0.01"
    assert run_group_from_overrides(["seed=4", *overrides[:2]]) == "model=gcn,optimizer.lr=0.01"


def test_group_choices_come_first_and_prefixes_are_stripped() -> None:
    overrides = [
        "seed=1",
        "++trainer.precision=16",
        "+model.residual=true",
        "~callbacks.plot",
        "head=mlp3",
        "experiment=lrgb-tuned/peptides-func-gcn",
    ]
    assert run_group_from_overrides(overrides) == (
        "experiment=lrgb-tuned/peptides-func-gcn,head=mlp3,model.residual=true,trainer.precision=16,~callbacks.plot"
    )


@pytest.mark.parametrize(
    ("override", "kept"),
    [
        ("seed=0", False),
        ("run_name=x", False),
        ("run_group=ablation", False),
        ("paths.cache_dir=/tmp/c", False),
        ("logger=wandb", False),
        ("logger.wandb.offline=true", False),
        ("hydra.sweep.dir=/tmp/s", False),
        ("hydra/launcher=submitit_local", False),
        ("dataset.data_dir=/data", False),
        ("++trainer.default_root_dir=/tmp/r", False),
        ("callbacks.ckpt.dirpath=/tmp/c", False),
        ("trainer.enable_progress_bar=false", False),
        ("++trainer.enable_model_summary=true", False),
        ("trainer.log_every_n_steps=1", False),
        ("++trainer.profiler=simple", False),
        ("++trainer.profiler.dirpath=/tmp/p", False),
        ("resume=auto", False),
        ("checkpoint_every_s=0", False),
        ("trainer.max_epochs=3", True),
        ("++trainer.profiler_extra=1", True),  # only the key itself and the keys under it are display-only
        ("dataset.seed=3", True),  # a dataset's own seed is configuration, not the replicate axis
        ("dataset.generation_seed=5", True),
        ("model=gcn", True),
        ("+model.residual=true", True),
    ],
)
def test_which_overrides_name_a_group(override: str, kept: bool) -> None:
    assert is_naming_override(override) is kept


def test_display_only_overrides_do_not_split_a_group() -> None:
    """The seeds of one configuration share a W&B group whether or not a job hides its progress bar."""
    plain = ["model=gcn", "trainer.max_epochs=3", "seed=0"]
    shown = [
        "model=gcn",
        "trainer.max_epochs=3",
        "seed=1",
        "trainer.enable_progress_bar=false",
        "++trainer.enable_model_summary=true",
        "trainer.log_every_n_steps=1",
        "++trainer.profiler=simple",
        "resume=auto",
        "checkpoint_every_s=0",
        "hydra.sweep.dir=/tmp/s",
        "hydra/launcher=submitit_local",
        "paths.data_dir=../shared/data",
        "logger=wandb",
    ]
    assert run_group_from_overrides(plain) == run_group_from_overrides(shown) == "model=gcn,trainer.max_epochs=3"


def test_group_without_overrides_is_default() -> None:
    assert run_group_from_overrides([]) == "default"
    assert run_group_from_overrides(["seed=2", "paths.data_dir=../data", "logger=none"]) == "default"


def test_long_group_is_shortened_with_a_stable_hash() -> None:
    overrides = [f"model.option_{i}={i}" for i in range(20)] + ["seed=0"]
    full = ",".join(sorted(o for o in overrides if o != "seed=0"))
    assert len(full) == 359
    assert hashlib.sha1(full.encode("utf-8")).hexdigest()[:8] == "8b094436"
    name = run_group_from_overrides(overrides)
    assert name == (
        "model.option_0=0,model.option_10=10,model.option_11=11,model.option_12=12,model.option_13=13,model.opti~8b094436"
    )
    assert len(name) == MAX_GROUP_LENGTH == 112
    assert len(f"{name},seed=4294967295") <= 128  # W&B's limit on run names
    assert run_group_from_overrides(list(reversed(overrides))) == name
    assert run_group_from_overrides([*overrides, "model.option_19=20"]) != name


def test_seed_dependent_keys_on_a_hand_built_config() -> None:
    cfg = OmegaConf.create(
        {
            "seed": 0,
            "a": "${seed}",
            "b": {"c": "x-${seed}", "d": 1, "e": "${b.d}"},
            "lst": [1, "${seed}"],
            "fixed_lst": [1, 2],
            "alias": "${b}",
            "missing": "???",
            "broken": "${nowhere}",
            "outside_job": "${hydra:runtime.output_dir}",  # no Hydra job here: unresolvable, skipped
            "hydra": {"s": "${seed}"},
        }
    )
    assert seed_dependent_keys(cfg) == ["a", "alias.c", "b.c", "lst", "seed"]
    assert cfg.seed == 0 and "hydra" in cfg  # the config itself is untouched


def test_seed_dependent_keys_with_a_non_integer_seed() -> None:
    assert seed_dependent_keys(OmegaConf.create({"seed": "abc", "name": "run-${seed}"})) == ["name", "seed"]


def test_seed_dependent_keys_of_the_composed_config(compose_cfg: Callable[..., DictConfig]) -> None:
    assert seed_dependent_keys(compose_cfg(["seed=3"])) == ["run_name", "seed"]
    assert seed_dependent_keys(compose_cfg(["logger=wandb"])) == ["logger.wandb.name", "run_name", "seed"]


def test_composed_config_without_run_group_still_resolves(compose_cfg: Callable[..., DictConfig]) -> None:
    cfg = compose_cfg(["logger=wandb", "seed=2"])
    assert cfg.run_group is None
    assert cfg.logger.wandb.group is None
    assert cfg.logger.wandb.name == "None,seed=2"


def test_a_repeated_key_counts_once_with_its_last_value() -> None:
    overrides = ["trainer.max_epochs=2", "model=gcn", "trainer.max_epochs=1", "+model.residual=true", "model.residual=false"]
    assert run_group_from_overrides(overrides) == "model=gcn,model.residual=false,trainer.max_epochs=1"


def test_the_optuna_trial_of_a_search_job_names_no_configuration() -> None:
    trial = "+optuna_trial={storage:'/s/optuna.journal',study_name:'cycles-gine',number:3,pruner:null}"
    assert run_group_from_overrides(["hparams_search=cycles_optuna", "optimizer.lr=0.01", trial]) == "optimizer.lr=0.01"
