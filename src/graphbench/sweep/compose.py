"""What composing ``conf/`` tells a sweep: the config groups, an hparams_search file's search space,
whether every run of the sweep composes, and the metric to optimize."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.errors import HydraException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from graphbench.run.config_errors import one_line
from graphbench.sweep.wandb import SweepError, first_value

#: where an hparams_search option lives, relative to the config directory
HPARAMS_SEARCH: str = "hparams_search"


@contextmanager
def hydra_conf(config_dir: Path) -> Iterator[None]:
    """Hydra initialized on ``config_dir`` (``conf/``) for :func:`compose_job`, cleared afterwards."""
    if not (config_dir / "config.yaml").is_file():
        raise SweepError(f"no config.yaml in {config_dir}: run from the repository root or pass --config-dir <repo>/conf")
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(config_dir.resolve()), version_base="1.3"):
            yield
    finally:
        GlobalHydra.instance().clear()


def config_groups() -> set[str]:
    """Every config group, nested ones as paths (``model``, ``hydra/launcher``, ``hparams_search``)."""
    loader = GlobalHydra.instance().config_loader()
    groups: set[str] = set()

    def walk(parent: str) -> None:
        for name in loader.list_groups(parent):
            full = f"{parent}/{name}" if parent else name
            groups.add(full)
            walk(full)

    walk("")
    return groups


def compose_job(overrides: Sequence[str]) -> DictConfig:
    """The config ``run.py <overrides>`` composes, with its ``hydra`` node; a composition error becomes
    one line naming the overrides."""
    try:
        return compose("config", overrides=list(overrides), return_hydra_config=True)
    except (HydraException, OmegaConfBaseException) as exc:
        mistyped = one_line(exc)  # a mistyped option, group or key: run.py's own message
        if mistyped is not None:
            raise SweepError(mistyped) from None
        detail = " ".join(str(exc).split("Config search path")[0].split())  # the search path is Hydra's, not the user's
        raise SweepError(f"run.py {' '.join(overrides)} does not compose: {detail}") from None


def hparams_search_overrides(name: str) -> list[str]:
    """The search space of ``conf/hparams_search/<name>.yaml`` (its ``hydra.sweeper.params``) as overrides."""
    params = OmegaConf.select(compose_job([f"{HPARAMS_SEARCH}={name}"]), "hydra.sweeper.params")
    if not params:
        raise SweepError(f"{HPARAMS_SEARCH}={name} has no hydra.sweeper.params to sweep")
    return [f"{key}={value}" for key, value in params.items()]


def job_config(cfg: DictConfig) -> dict[str, Any]:
    """The part of a composed config that a run sees (everything but ``hydra``), unresolved."""
    return OmegaConf.to_container(OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"]), resolve=False)


def dataset_metric(dataset: DictConfig) -> tuple[str, bool]:
    """``(monitor, higher_is_better)`` of a composed ``cfg.dataset``, e.g. ``("val/ap", True)``.

    The dataset YAML states ``metric`` and ``higher_is_better`` at its top level or under ``source``;
    the monitor is ``val/<metric>``, as ``DatasetInfo.monitor`` names it.
    """
    for node in (dataset, dataset.get("source")):
        if isinstance(node, DictConfig) and node.get("metric") is not None and node.get("higher_is_better") is not None:
            return f"val/{node.metric}", bool(node.higher_is_better)
    raise SweepError(f"dataset {dataset.get('name')!r} states no metric and higher_is_better (at its top level or under source)")


def run_variants(parameters: Mapping[str, Mapping[str, Any]], groups: set[str]) -> list[list[str]]:
    """Agent argument lists that together touch every choice of a config group: the first grid point,
    then that point with each other option of each swept group (a misspelt option fails to compose)."""
    first = {name: first_value(spec) for name, spec in parameters.items()}
    variants = [first]
    for name, spec in parameters.items():
        if name.lstrip("+") in groups and "values" in spec:
            variants += [{**first, name: value} for value in spec["values"][1:]]
    return [[f"{name}={value}" for name, value in variant.items()] for variant in variants]  # as W&B's agent writes them
