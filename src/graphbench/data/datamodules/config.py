"""How a dataset node of the config becomes DataModule arguments (the scheme of ``conf/dataset/*.yaml``).

A dataset YAML names its level's DataModule as ``_target_`` and nests its source under ``source:``.
Every knob a user sets stays a flat key of ``dataset`` (``dataset.split_index=3``), and the source
reads its knobs by interpolation (``split_index: ${dataset.split_index}``). The DataModule gets every
flat key except

- the keys the source interpolates, unless the DataModule takes them too (``name``), and
- :data:`READ_ELSEWHERE` (keys of the dataset node that other parts of the platform read).

A flat key that neither takes is passed on, so that the DataModule names it in its error.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf

from graphbench.run.errors import ConfigError

#: keys of the dataset node that are not DataModule arguments: ``module`` configures the task module,
#: ``literature`` lists published values for the report's paper column (graphbench.report.literature),
#: ``fold_key`` names the keys besides ``split_index`` that index a fold (graphbench.report.collect.fold_names)
READ_ELSEWHERE: tuple[str, ...] = ("module", "literature", "fold_key")

_KNOB = re.compile(r"^\$\{dataset\.([A-Za-z_][A-Za-z0-9_]*)\}$")


def source_knobs(dataset: DictConfig) -> set[str]:
    """The flat keys of ``dataset`` that its ``source`` node reads (``key: ${dataset.key}``)."""
    source = dataset.get("source")
    if not isinstance(source, DictConfig):
        return set()
    values = OmegaConf.to_container(source, resolve=False)
    assert isinstance(values, dict)
    return {match[1] for value in values.values() if isinstance(value, str) and (match := _KNOB.match(value))}


def init_parameters(cls: type) -> set[str]:
    """The keyword arguments ``cls(...)`` accepts, following ``**kwargs`` up the class hierarchy."""
    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        parameters = inspect.signature(init).parameters.values()
        names |= {p.name for p in parameters if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "self"}
        if not any(p.kind is p.VAR_KEYWORD for p in parameters):
            break
    return names


def datamodule_arguments(dataset: DictConfig) -> dict[str, Any]:
    """The resolved dataset node without the keys that are not its DataModule's (see the module
    docstring); ``source`` stays a node with ``_target_`` that ``instantiate`` builds first."""
    if "source" not in dataset:
        raise ConfigError(f"dataset '{dataset.get('name')}' has no source node; add `source:` with the dataset source's _target_")
    target = dataset.get("_target_")
    try:
        taken = init_parameters(get_class(str(target)))
    except Exception as exc:
        raise ConfigError(f"dataset._target_={target!r} is not an importable DataModule class ({exc})") from None
    drop = (source_knobs(dataset) - taken) | set(READ_ELSEWHERE)
    resolved = OmegaConf.to_container(dataset, resolve=True)
    assert isinstance(resolved, dict)
    return {key: value for key, value in resolved.items() if key not in drop}
