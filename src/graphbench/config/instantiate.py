"""``hydra.utils.instantiate`` with graphbench's error messages and metadata keys."""

from __future__ import annotations

from typing import Any

from hydra.errors import InstantiationException
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from graphbench.run.errors import ConfigError, GraphbenchError

#: keys that describe a group option (for logs, reports and their paper values, the budget) or how it runs (model.compile),
#: not constructor arguments
METADATA_KEYS: tuple[str, ...] = ("name", "width_multiple", "compile", "literature")


def build(node: DictConfig, what: str, drop: tuple[str, ...] = (), **kwargs: Any) -> Any:
    """Instantiate ``node`` without the keys in ``drop`` (e.g. :data:`METADATA_KEYS`).

    Errors raised while building become one :class:`ConfigError` naming ``what`` failed and why;
    graphbench's own errors (e.g. missing raw files) pass through unchanged.
    """
    if isinstance(node, DictConfig):
        resolved = OmegaConf.to_container(node, resolve=True)
        assert isinstance(resolved, dict)
        node = {k: v for k, v in resolved.items() if k not in drop}
    try:
        return instantiate(node, **kwargs)
    except InstantiationException as exc:
        cause = exc.__cause__ if exc.__cause__ is not None else exc
        if isinstance(cause, GraphbenchError):
            raise cause from None
        raise ConfigError(f"could not build {what}: {cause}") from None
