"""graphbench.run.recipe: the experiment a dataset's recipe names, the command line's deviations on its card, the
override grammar of a card, and the ``--cfg job`` command line that shows them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import DictConfig, OmegaConf

from graphbench.run.recipe import (
    NO_PUBLISHED_SETTING,
    card_line,
    override_deviations,
    override_value,
    recipe_experiment,
    shown_config_argv,
    with_deviations,
)
from tests.paths import CONF

CARD = {
    "source": "paper, Table 1",
    "deviations": [{"key": "model.dropout", "source": 0.5, "ours": 0.1, "why": "w", "effect": None}],
}


def config(**values: object) -> DictConfig:
    base = {"recipe_card": CARD, "head": {"name": "mlp3", "num_layers": 3}, "trainer": {"max_epochs": 250}, "seed": 0}
    return OmegaConf.merge(OmegaConf.create(base), OmegaConf.create(values))


def test_the_recipe_experiment_is_named_by_the_config_exists_and_yields_to_a_chosen_one() -> None:
    cfg = OmegaConf.create({"recipe_experiment": "lrgb-tuned/peptides-func-${model.name}", "model": {"name": "gcn"}})
    assert recipe_experiment(cfg, False, {"lrgb-tuned/peptides-func-gcn"}.__contains__) == "lrgb-tuned/peptides-func-gcn"
    assert recipe_experiment(cfg, True, lambda name: True) is None  # experiment=... on the command line wins
    assert recipe_experiment(cfg, False, lambda name: False) is None  # no such experiment for this model
    assert recipe_experiment(OmegaConf.create({"recipe_experiment": None}), False, lambda name: True) is None


def test_each_override_that_changes_the_recipe_is_a_deviation_and_the_others_are_not() -> None:
    recipe = config()
    ours = config(head={"name": "mlp2", "num_layers": 2}, trainer={"max_epochs": 1}, seed=3)
    overrides = ["head=mlp2", "trainer.max_epochs=1", "seed=3", "dataset=cora", "paths.data_dir=/d", "trainer.max_epochs=250"]
    assert override_deviations(recipe, ours, overrides[:5]) == [
        {"key": "head", "source": "mlp3", "ours": "mlp2", "why": "command line: head=mlp2", "effect": None},
        {"key": "trainer.max_epochs", "source": 250, "ours": 1, "why": "command line: trainer.max_epochs=1", "effect": None},
    ]
    assert override_deviations(recipe, recipe, ["trainer.max_epochs=250"]) == []  # the recipe's own value: none


def test_the_card_lists_its_own_deviations_then_the_command_lines() -> None:
    ours = with_deviations(config(trainer={"max_epochs": 1}), config(), ["trainer.max_epochs=1", "model.dropout=0.3"])
    keys = [entry.key for entry in ours.recipe_card.deviations]
    assert keys == ["model.dropout", "trainer.max_epochs"]  # model.dropout: already on the card
    default = config(recipe_card={"source": NO_PUBLISHED_SETTING, "deviations": []})
    shown = with_deviations(config(recipe_card=default.recipe_card, trainer={"max_epochs": 1}), default, ["trainer.max_epochs=1"])
    assert list(shown.recipe_card.deviations) == []  # no published setting: nothing to deviate from


def test_a_card_written_as_an_override_reads_back_the_same() -> None:
    card = {
        "source": "a 'b' c, d=e",
        "deviations": [{"key": "head", "source": None, "ours": [1, 2.5], "why": "x\\y", "effect": True}],
    }
    text = override_value(card)
    assert text.startswith("{source:'a \\'b\\' c, d=e',deviations:[{key:'head',source:null,ours:[1,2.5]")
    from hydra.core.override_parser.overrides_parser import OverridesParser

    (parsed,) = OverridesParser.create().parse_overrides([f"++recipe_card={text}"])
    assert parsed.value() == card


@pytest.fixture(scope="module")
def conf_compose() -> Iterator[object]:
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        yield lambda overrides: compose("config", overrides=list(overrides))
    GlobalHydra.instance().clear()


def test_cfg_job_shows_the_recipe_experiment_and_the_card_with_the_deviations(conf_compose) -> None:  # type: ignore[no-untyped-def]
    argv = ["dataset=peptides-func", "model=gcn", "head=mlp2", "--cfg", "job"]
    shown = shown_config_argv(argv, conf_compose)
    assert shown[:3] == ["--cfg", "job", "experiment=lrgb-tuned/peptides-func-gcn"]
    assert shown[3:6] == ["dataset=peptides-func", "model=gcn", "head=mlp2"] and shown[6].startswith("++recipe_card={source:")
    cfg = conf_compose(shown[2:])
    assert (cfg.model.hidden_dim, cfg.normalization.name, cfg.head.name) == (235, "none", "mlp2")
    assert [entry.key for entry in cfg.recipe_card.deviations] == ["head"]


@pytest.mark.parametrize(
    "argv",
    [
        ["dataset=zinc", "model=gcn", "--cfg", "job"],  # no published setting: nothing to add
        ["dataset=mutg", "--cfg", "job"],  # mistyped: Hydra reports it
        ["-m", "dataset=peptides-func", "model=gcn,gine", "--cfg", "job"],  # a sweep: each job composes its own
        ["--config-dir", "/mine", "dataset=peptides-func", "model=gcn", "--cfg", "job"],
    ],
)
def test_cfg_job_command_lines_without_a_recipe_to_show_stay_as_they_are(conf_compose, argv: Sequence[str]) -> None:  # type: ignore[no-untyped-def]
    assert shown_config_argv(argv, conf_compose) == list(argv)


def test_a_run_logs_its_card_in_one_line() -> None:
    cfg = with_deviations(config(trainer={"max_epochs": 1}), config(), ["trainer.max_epochs=1"])
    assert card_line(cfg) == "recipe: paper, Table 1; deviations: model.dropout 0.5 -> 0.1, trainer.max_epochs 250 -> 1"
    assert card_line(OmegaConf.create({"recipe_card": {"source": NO_PUBLISHED_SETTING, "deviations": []}})) == (
        "recipe: graphbench default, no published setting"
    )
    assert card_line(OmegaConf.create({"recipe_card": None})) is None
