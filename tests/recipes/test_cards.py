"""Every experiment that names a paper carries a well-formed recipe card (graphbench.config.checks.recipe_card_problems),
written in its own file, whose deviation keys start at a key of the composed config; and no header keeps a
"Deviations:" paragraph outside the card."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf

from graphbench.config.checks import recipe_card_problems
from tests.paths import CONF
from tests.recipes._source import composed

EXPERIMENTS = sorted((CONF / "experiment").rglob("*.yaml"))
#: what a header's first lines say when the recipe is a paper's (its authors, or the study it belongs to)
PAPER_MARKERS: tuple[str, ...] = ("et al.", "NCMemo", "IGB", "LRGB")
#: task configs whose recipe names a paper, and the card each loads
TASK_CARDS = sorted((CONF / "task" / "card").glob("*.yaml"))


def names_a_paper(path: Path) -> bool:
    """A ``literature`` entry, or a paper named in the header's first three comment lines."""
    text = path.read_text()
    header = [line for line in text.splitlines() if line.startswith("#") and "@package" not in line][:3]
    return "literature" in (OmegaConf.load(path) or {}) or any(m in line for line in header for m in PAPER_MARKERS)


def top_level_keys() -> set[str]:
    return set(composed("experiment=planetoid/cora-gcn").keys())


@pytest.mark.parametrize("path", EXPERIMENTS + TASK_CARDS, ids=lambda p: str(p.relative_to(CONF)))
def test_every_recipe_naming_a_paper_has_a_well_formed_card(path: Path) -> None:
    if path in EXPERIMENTS and not names_a_paper(path):
        pytest.skip("names no paper")
    config = OmegaConf.load(path)
    assert "recipe_card" in config, f"{path.name}: names a paper but has no recipe_card"
    assert recipe_card_problems(config.recipe_card) == []
    assert "Deviation" not in "".join(line for line in path.read_text().splitlines() if line.startswith("#"))


def test_deviation_keys_start_at_a_key_of_the_config() -> None:
    """Outside lrgb-tuned/, whose cards also name parts of the built network (``network.*``)."""
    keys = top_level_keys()
    unknown = [
        f"{path.relative_to(CONF)}: {d.key}"
        for path in EXPERIMENTS + TASK_CARDS
        if path.parent.name != "lrgb-tuned"
        if "recipe_card" in (config := OmegaConf.load(path)) and config.recipe_card is not None
        for d in config.recipe_card.deviations
        if d.key.split(".")[0] not in keys
    ]
    assert unknown == []


def test_the_schema_check_finds_a_missing_why_and_the_samplers_experiment_names_no_paper() -> None:
    card = OmegaConf.load(CONF / "experiment" / "planetoid" / "cora-grand.yaml").recipe_card
    card.deviations[0].why = ""
    assert recipe_card_problems(card) == ["recipe_card.deviations[0].why='' must be a non-empty string"]
    assert not names_a_paper(CONF / "experiment" / "samplers" / "sbm-large.yaml")
