"""Every option of every config group composes, with every option of every other group."""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from tests.paths import CONF

GROUPS = ["task", "dataset", "model", "head", "pe", "normalization", "budget", "optimizer", "scheduler", "trainer", "logger", "callbacks", "paths"]


def group_options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


def pairwise_cover(options: dict[str, list[str]]) -> list[dict[str, str]]:
    """A small set of combinations in which every pair of options of two different groups occurs
    (a greedy covering array): all pairwise interactions for far fewer composes than the product."""
    groups = list(options)
    uncovered = {
        (g1, o1, g2, o2)
        for g1, g2 in itertools.combinations(groups, 2)
        for o1 in options[g1]
        for o2 in options[g2]
    }
    rows: list[dict[str, str]] = []
    while uncovered:
        g1, o1, g2, o2 = min(uncovered)
        row = {g1: o1, g2: o2}
        for g in groups:
            if g in row:
                continue
            row[g] = max(options[g], key=lambda o: sum(
                (a, row[a], g, o) in uncovered or (g, o, a, row[a]) in uncovered for a in row))
        uncovered -= {(a, row[a], b, row[b]) for a, b in itertools.combinations(groups, 2)}
        rows.append(row)
    return rows


def test_every_group_has_options() -> None:
    for group in GROUPS:
        assert group_options(group), f"conf/{group}/ has no options"


def test_pairwise_cover_covers_every_pair() -> None:
    options = {"a": ["1", "2", "3"], "b": ["x", "y"], "c": ["p", "q"]}
    rows = pairwise_cover(options)
    for (g1, g2) in itertools.combinations(options, 2):
        for o1, o2 in itertools.product(options[g1], options[g2]):
            assert any(r[g1] == o1 and r[g2] == o2 for r in rows), (g1, o1, g2, o2)
    assert len(rows) < 3 * 2 * 2


COMBINATIONS = pairwise_cover({g: group_options(g) for g in GROUPS})


@pytest.mark.parametrize("combo", COMBINATIONS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items() if k in ("dataset", "model", "pe")))
def test_combination_composes_and_resolves(compose_cfg, combo: dict[str, str]) -> None:
    cfg = compose_cfg([f"{g}={o}" for g, o in combo.items()])
    resolved = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(resolved, dict)
    for group, option in combo.items():
        if group in ("task", "dataset", "model", "head", "pe", "normalization", "budget", "optimizer", "scheduler"):
            assert resolved[group]["name"] == option, f"{group}={option} composed as {resolved[group].get('name')}"
