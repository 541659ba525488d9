"""Every combination of the config groups' options composes.

Composing the full product is infeasible (it grows with every new option), so the test proves it in
two steps: (1) every option composes and resolves on its own; (2) an option can only break another
group's option through an interpolation ``${group.key}``, so every such reference is checked against
every option of the referenced group. Together they imply that every combination resolves. A pairwise
covering array of real composes (every pair of options of two groups) checks the argument in practice.
"""

from __future__ import annotations

import itertools
import re

import pytest
from hydra import compose
from omegaconf import DictConfig, OmegaConf, open_dict

from tests.paths import CONF

GROUPS = [
    "task",
    "dataset",
    "model",
    "head",
    "pe",
    "normalization",
    "budget",
    "optimizer",
    "scheduler",
    "trainer",
    "logger",
    "callbacks",
    "paths",
]
NAMED_GROUPS = ("task", "dataset", "model", "head", "pe", "normalization", "budget", "optimizer", "scheduler")
INTERPOLATION = re.compile(r"\$\{([a-z_]+)\.([A-Za-z0-9_.]+)\}")


def group_options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


def composed(overrides: list[str]) -> DictConfig:
    cfg = compose("config", overrides=overrides, return_hydra_config=True)
    with open_dict(cfg):
        cfg.paths.output_dir = "/tmp/graphbench-compose-test"
        del cfg["hydra"]
    return cfg


def pairwise_cover(options: dict[str, list[str]]) -> list[dict[str, str]]:
    """A small set of combinations in which every pair of options of two different groups occurs
    (a greedy covering array)."""
    groups = list(options)
    uncovered = {(g1, o1, g2, o2) for g1, g2 in itertools.combinations(groups, 2) for o1 in options[g1] for o2 in options[g2]}
    rows: list[dict[str, str]] = []
    while uncovered:
        g1, o1, g2, o2 = min(uncovered)
        row = {g1: o1, g2: o2}
        for g in groups:
            if g not in row:
                row[g] = max(
                    options[g], key=lambda o: sum((a, row[a], g, o) in uncovered or (g, o, a, row[a]) in uncovered for a in row)
                )
        uncovered -= {(a, row[a], b, row[b]) for a, b in itertools.combinations(groups, 2)}
        rows.append(row)
    return rows


def test_every_group_has_options() -> None:
    for group in GROUPS:
        assert group_options(group), f"conf/{group}/ has no options"


def test_pairwise_cover_covers_every_pair() -> None:
    options = {"a": ["1", "2", "3"], "b": ["x", "y"], "c": ["p", "q"]}
    rows = pairwise_cover(options)
    for g1, g2 in itertools.combinations(options, 2):
        for o1, o2 in itertools.product(options[g1], options[g2]):
            assert any(r[g1] == o1 and r[g2] == o2 for r in rows), (g1, o1, g2, o2)
    assert len(rows) < 3 * 2 * 2


@pytest.mark.parametrize(("group", "option"), [(g, o) for g in GROUPS for o in group_options(g)])
def test_each_option_composes_and_resolves(hydra_conf: None, group: str, option: str) -> None:
    cfg = composed([f"{group}={option}"])
    resolved = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(resolved, dict)
    if group in NAMED_GROUPS:
        assert resolved[group]["name"] == option, f"{group}={option} composes with name {resolved[group].get('name')!r}"


def cross_group_references() -> list[tuple[str, str, str, str]]:
    """(group, option, referenced group, key) for every ``${group.key}`` in an option's YAML."""
    refs = []
    for group in GROUPS:
        for option in group_options(group):
            text = (CONF / group / f"{option}.yaml").read_text()
            for ref_group, key in INTERPOLATION.findall(text):
                if ref_group in GROUPS and ref_group != group:
                    refs.append((group, option, ref_group, key))
    return refs


def test_every_cross_group_reference_resolves_for_every_option(hydra_conf: None) -> None:
    # whether ``${group.key}`` resolves depends only on the option chosen in ``group``
    needed: dict[str, set[str]] = {}
    users: dict[tuple[str, str], str] = {}
    for group, option, ref_group, key in cross_group_references():
        needed.setdefault(ref_group, set()).add(key)
        users[(ref_group, key)] = f"{group}/{option}"
    assert needed
    for ref_group, keys in needed.items():
        for ref_option in group_options(ref_group):
            cfg = composed([f"{ref_group}={ref_option}"])
            for key in keys:
                value = OmegaConf.select(cfg, f"{ref_group}.{key}", default="__missing__")
                assert value != "__missing__", (
                    f"{users[(ref_group, key)]} uses ${{{ref_group}.{key}}}, which {ref_group}/{ref_option} lacks"
                )


MODEL_SIDE = ["model", "head", "pe", "normalization", "budget", "optimizer", "scheduler", "trainer", "logger"]


@pytest.mark.parametrize("combo", pairwise_cover({g: group_options(g) for g in MODEL_SIDE}), ids=lambda c: ",".join(c.values()))
def test_pairwise_combinations_compose(hydra_conf: None, combo: dict[str, str]) -> None:
    cfg = composed([f"{g}={o}" for g, o in combo.items()])
    assert isinstance(OmegaConf.to_container(cfg, resolve=True), dict)
