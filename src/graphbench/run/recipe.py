"""A dataset's published setting for the chosen model, and where the command line departs from it.

``python run.py dataset=X model=Y`` trains X's published setting for Y. Where that setting is written as
values, the dataset's recipe (``conf/recipe/<dataset>.yaml``, merged by Hydra) holds it. Where it also
chooses config groups per model (the LRGB reassessment's head, PE and normalization differ by model),
it is an experiment, and the dataset's recipe names it: ``recipe_experiment: lrgb-tuned/peptides-func-${model.name}``.
Hydra allows no group choice in a config selected through an interpolation, so :func:`with_recipe`
composes the config again with ``experiment=<that experiment>`` before the command line's overrides:
the command line still wins, a group choice (``head=mlp2``) included.

Every config carries a ``recipe_card`` (``conf/config.yaml``: :data:`NO_PUBLISHED_SETTING` unless a
recipe sets its own). Each command-line override that changes a value of a published setting is added to
its card's deviations (:func:`override_deviations`): ``{key: head, source: mlp3, ours: mlp2, why:
"command line: head=mlp2", effect: null}``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, OmegaConf, open_dict

#: the card of a dataset and model without a published setting (``conf/config.yaml``'s ``recipe_card.source``)
NO_PUBLISHED_SETTING: str = "graphbench default, no published setting"
#: the top-level key by which a dataset's recipe names the experiment holding its published setting for the model
RECIPE_KEY: str = "recipe_experiment"
#: overrides that pick the setting, or change where a run writes, how it logs or which replicate it is, and so
#: are no deviation from a recipe: these keys and every key below them
NOT_DEVIATIONS: tuple[str, ...] = (
    "dataset",
    "model",
    "experiment",
    "seed",
    "paths",
    "hydra",
    "logger",
    "resume",
    "ckpt_path",
    "checkpoint_every_s",
    "run_group",
    "run_name",
    "recipe_card",
    RECIPE_KEY,
    "speedups",
    "threads",
    "trainer.enable_progress_bar",
    "trainer.enable_model_summary",
    "dataset.num_workers",
    "dataset.featurize_workers",
    "dataset.download",
    "dataset.batch_on_device",
)

#: ``compose(overrides)``: the config ``run.py <overrides>`` composes
Compose = Callable[[Sequence[str]], DictConfig]


def recipe_experiment(cfg: DictConfig, experiment_chosen: bool, exists: Callable[[str], bool]) -> str | None:
    """The experiment that holds the published setting of ``cfg``'s dataset and model: ``cfg.recipe_experiment``
    (resolved) when no experiment was chosen and ``exists(name)``; ``None`` otherwise."""
    if experiment_chosen:
        return None
    name = OmegaConf.select(cfg, RECIPE_KEY, default=None)
    return str(name) if name and exists(str(name)) else None


def _is_deviation_key(key: str) -> bool:
    return not any(key == name or key.startswith(f"{name}.") for name in NOT_DEVIATIONS)


def _shown(node: Any) -> Any:
    """A config value as a card writes it: a group's option by its ``name``, a container as plain data."""
    if isinstance(node, DictConfig):
        return node.get("name") if "name" in node else OmegaConf.to_container(node, resolve=True)
    if OmegaConf.is_config(node):
        return OmegaConf.to_container(node, resolve=True)
    return node


def override_deviations(recipe: DictConfig, ours: DictConfig, overrides: Sequence[str]) -> list[dict[str, Any]]:
    """One deviation per override in ``overrides`` (Hydra's syntax) that changes a value of ``recipe`` (the
    setting composed without them) in ``ours`` (composed with them): ``{key, source, ours, why, effect}``, a group
    choice (``head=mlp2``) by its options' names. Overrides of :data:`NOT_DEVIATIONS` are skipped."""
    deviations = []
    for override in OverridesParser.create().parse_overrides(list(overrides)):
        key = override.key_or_group.split("@")[0].replace("/", ".")
        if not _is_deviation_key(key):
            continue
        source = _shown(OmegaConf.select(recipe, key, default=None))
        value = _shown(OmegaConf.select(ours, key, default=None))
        if source != value:
            why = f"command line: {override.input_line}"
            deviations.append({"key": key, "source": source, "ours": value, "why": why, "effect": None})
    return deviations


def with_deviations(cfg: DictConfig, recipe: DictConfig, overrides: Sequence[str]) -> DictConfig:
    """``cfg`` whose ``recipe_card`` (that of ``recipe``, when it names a published setting) lists, after its own
    deviations, those of the command line's ``overrides`` (:func:`override_deviations`) on keys it does not list."""
    card = OmegaConf.select(recipe, "recipe_card", default=None)
    if card is None or card.get("source") == NO_PUBLISHED_SETTING:
        return cfg
    listed = {str(entry["key"]) for entry in card.deviations}
    added = [d for d in override_deviations(recipe, cfg, overrides) if d["key"] not in listed]
    if added:
        with open_dict(cfg):
            cfg.recipe_card = OmegaConf.create(
                {"source": card.source, "deviations": [*OmegaConf.to_container(card.deviations, resolve=True), *added]}
            )
    return cfg


def with_recipe(
    cfg: DictConfig, overrides: Sequence[str], compose: Compose, experiment_chosen: bool, exists: Callable[[str], bool]
) -> DictConfig:
    """The config of ``overrides`` with its dataset's published setting for its model: composed again after
    ``experiment=<recipe experiment>`` when the dataset's recipe names one (:func:`recipe_experiment`), and its
    card listing the command line's deviations (:func:`with_deviations`). ``cfg``: the config Hydra composed from
    ``overrides``; ``compose`` composes another; ``experiment_chosen``: whether ``overrides`` choose an experiment."""
    experiment = recipe_experiment(cfg, experiment_chosen, exists)
    selection = [f"experiment={experiment}"] if experiment is not None else []
    picks = [o for o in overrides if o.lstrip("+~").split("=")[0].split("@")[0] in ("dataset", "model", "experiment")]
    if experiment is not None:
        cfg = compose([*selection, *overrides])
    card = cfg.get("recipe_card")
    if card is None or card.get("source") == NO_PUBLISHED_SETTING:
        return cfg
    if not any(_is_deviation_key(o.lstrip("+~").split("=")[0]) for o in overrides):
        return cfg
    return with_deviations(cfg, compose([*selection, *picks]), overrides)


def hydra_compose(overrides: Sequence[str]) -> DictConfig:
    """The primary config composed with ``overrides`` in the running Hydra app (its search path, ``--config-dir``
    included), without the ``hydra`` node, as Hydra hands a job its config."""
    from hydra import compose

    return compose(config_name="config", overrides=list(overrides))


def experiment_exists(name: str) -> bool:
    """Whether ``experiment=<name>`` (``lrgb-tuned/peptides-func-gcn``) is an option of the running Hydra app."""
    from hydra.core.global_hydra import GlobalHydra

    group, _, option = f"experiment/{name}".rpartition("/")
    return option in GlobalHydra.instance().config_loader().get_group_options(group)


def override_value(value: Any) -> str:
    """``value`` in Hydra's override grammar: ``null``, ``true``, numbers, quoted strings, ``[...]``, ``{key:...}``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(override_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{key}:{override_value(item)}" for key, item in value.items()) + "}"
    return "'" + str(value).replace("'", "\\'") + "'"  # Hydra keeps other backslashes as they are


#: Hydra's flags that take a value (``--cfg job``); ``--info`` may take one too
_FLAGS_WITH_VALUES: frozenset[str] = frozenset(
    {"--cfg", "-c", "--package", "-p", "--config-path", "-cp", "--config-name", "-cn", "--config-dir", "-cd"}
)


def shown_config_argv(argv: Sequence[str], compose: Compose) -> list[str]:
    """``argv`` (``sys.argv[1:]`` of ``--cfg job``) with the dataset's published setting made visible: the recipe
    experiment before the overrides and the card's deviations as ``++recipe_card=...`` after them, so that Hydra
    prints what a run of these overrides trains (:func:`with_recipe`). ``argv`` unchanged when it composes no
    recipe, when it does not compose at all (Hydra then reports why), for a sweep (``-m`` with ``a,b`` values) or
    with ``--config-dir``."""
    flags, overrides, skip = [], [], False
    for arg in argv:
        if skip or arg.startswith("-"):
            flags.append(arg)
            skip = not skip and arg in _FLAGS_WITH_VALUES
        else:
            overrides.append(arg)
    if any(flag in ("--config-dir", "-cd") or flag.startswith("--config-dir=") for flag in flags):
        return list(argv)
    if any(flag in ("-m", "--multirun") for flag in flags) and any("," in override for override in overrides):
        return list(argv)  # a sweep: each job composes its own setting (:func:`with_recipe`)
    try:
        cfg = compose(overrides)
        chosen = any(o.lstrip("+").split("=")[0] == "experiment" for o in overrides)
        experiment = recipe_experiment(cfg, chosen, lambda name: _composes(compose, [f"experiment={name}"]))
        recipe = with_recipe(cfg, overrides, compose, chosen, lambda name: experiment == name)
    except Exception:  # a mistyped command line: Hydra reports it
        return list(argv)
    added = [f"experiment={experiment}"] if experiment is not None else []
    card = recipe.get("recipe_card")
    if card is not None and card != cfg.get("recipe_card"):
        added.append(f"++recipe_card={override_value(OmegaConf.to_container(card, resolve=True))}")
    if not added:
        return list(argv)
    return [*flags, *added[:1], *overrides, *added[1:]] if experiment is not None else [*flags, *overrides, *added]


def _composes(compose: Compose, overrides: Sequence[str]) -> bool:
    try:
        compose(overrides)
    except Exception:
        return False
    return True


def card_line(cfg: DictConfig) -> str | None:
    """The line a run logs at its start: ``recipe: <source>; deviations: head mlp3 -> mlp2, ...`` (``None``
    without a card)."""
    card = cfg.get("recipe_card")
    if card is None:
        return None
    deviations = [f"{entry.key} {_shown(entry.source)} -> {_shown(entry.ours)}" for entry in card.deviations]
    return f"recipe: {card.source}" + (f"; deviations: {', '.join(deviations)}" if deviations else "")
