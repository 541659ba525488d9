"""Every experiment composes and resolves; the commands an experiment's header quotes compose too, with
every value of their sweeps, and their sampler instantiates."""

from __future__ import annotations

import itertools
import shlex

import pytest
from omegaconf import DictConfig, OmegaConf

from graphbench.build.data import build_sampler
from graphbench.config.checks import schema_problems
from tests.conf.test_compose import composed
from tests.paths import CONF

EXPERIMENTS = sorted(str(p.relative_to(CONF / "experiment").with_suffix("")) for p in (CONF / "experiment").rglob("*.yaml"))


def quoted_commands(experiment: str) -> list[list[str]]:
    """The ``python run.py -m ...`` commands of an experiment's header comment, as override lists, with
    each sweep (``a,b,c``) expanded to its values."""
    commands = []
    for line in (CONF / "experiment" / f"{experiment}.yaml").read_text().splitlines():
        text = line.lstrip("# ").strip()
        if not text.startswith("python run.py -m "):
            continue
        overrides = shlex.split(text.removeprefix("python run.py -m ").rstrip("\\"))
        sweeps = [[f"{o.split('=')[0]}={v}" for v in o.split("=", 1)[1].split(",")] if "[" not in o else [o] for o in overrides]
        commands += [list(combo) for combo in itertools.product(*sweeps)]
    return commands


def resolved(overrides: list[str]) -> DictConfig:
    cfg = composed(overrides)
    OmegaConf.resolve(cfg)
    return cfg


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_every_experiment_composes(hydra_conf: None, experiment: str) -> None:
    cfg = resolved([f"experiment={experiment}"])
    assert cfg.dataset.name and cfg.model.name
    assert schema_problems(cfg) == []  # every key the experiment sets is one its node's schema takes


def test_sbm_large_sampler_commands_compose_and_build_their_samplers(hydra_conf: None) -> None:
    commands = quoted_commands("samplers/sbm-large")
    samplers = {}
    for overrides in commands:
        cfg = resolved(overrides)
        assert cfg.dataset.name == "sbm-large" and cfg.dataset.homophily == 0.6
        assert cfg.model.name in ("gcn", "sage") and cfg.model.num_layers == 2
        sampler = build_sampler(cfg.sampler)  # as build_datamodule builds it
        samplers.setdefault(cfg.sampler.name, []).append((cfg.model.name, sampler, cfg.trainer.max_epochs))
    # six samplers for both models, then four denser subgraph samplers for SAGE; three seeds each
    assert len(commands) == 6 * 2 * 3 + 4 * 3
    assert sorted(samplers) == ["cluster_gcn", "full", "neighbor", "saint_edge", "saint_node", "saint_rw"]
    assert samplers["full"][0][2] == 400 and samplers["neighbor"][0][2] == 10
    sizes = {
        name: sorted({(model, getattr(s, "budget", None) or s.parts_per_batch) for model, s, _ in runs})
        for name, runs in samplers.items()
        if name in ("cluster_gcn", "saint_node")
    }
    assert sizes == {
        "cluster_gcn": [("gcn", 8), ("sage", 8), ("sage", 20)],
        "saint_node": [("gcn", 20000), ("sage", 20000), ("sage", 120000)],
    }
