"""``hydra.utils.instantiate`` with graphbench's error messages and metadata keys.

A class names only its own arguments in its errors (:class:`~graphbench.vocabulary.errors.ArgumentError`:
``pad_to='xyz' is not one of ['none', 'buckets']``); :func:`build` knows the config node it builds from
and puts the node's path in front (``dataset.pad_to='xyz' ...``), also when a ``_partial_`` node's
object is made later (:class:`LocatedPartial`)."""

from __future__ import annotations

import functools
import re
from typing import Any

from hydra.errors import InstantiationException
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from graphbench.vocabulary.errors import ArgumentError, ConfigError, GraphbenchError

#: keys that describe a group option (for logs, reports and their paper values, the budget) or how it runs (model.compile),
#: not constructor arguments
METADATA_KEYS: tuple[str, ...] = ("name", "width_multiple", "compile", "literature")

#: a config path: dotted keys (``pe.encoder``, ``callbacks.ntk``)
_CONFIG_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


class LocatedPartial(functools.partial):  # type: ignore[type-arg]
    """A ``_partial_`` node's constructor, made by :func:`build`: called, an
    :class:`~graphbench.vocabulary.errors.ArgumentError` of the object becomes one naming the node's path
    (``head.num_layers=0 must be >= 1``)."""

    #: the config path of the node
    path: str
    #: the node's keys: an error about another argument (one its builder passes) keeps its own words
    keys: frozenset[str]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        except ArgumentError as exc:
            if exc.argument in self.keys:
                raise exc.at(self.path) from None
            raise


def build(node: DictConfig, what: str, drop: tuple[str, ...] = (), *, path: str | None = None, **kwargs: Any) -> Any:
    """Instantiate ``node`` without the keys in ``drop`` (e.g. :data:`METADATA_KEYS`).

    Errors raised while building become one :class:`ConfigError` naming ``what`` failed and why;
    graphbench's own errors (e.g. missing raw files) pass through unchanged, but for an
    :class:`~graphbench.vocabulary.errors.ArgumentError` about a key of ``node``, which gets the node's config
    path in front: ``path``, or ``what`` itself when it is a config path (``head``, ``pe.encoder``). A
    ``_partial_`` result does the same when it is called (:class:`LocatedPartial`). An argument that the
    caller passes (``kwargs``) is no key of the node, and its error keeps the words of its owner.
    """
    where = path if path is not None else (what if _CONFIG_PATH.match(what) else None)
    if isinstance(node, DictConfig):
        resolved = OmegaConf.to_container(node, resolve=True)
        assert isinstance(resolved, dict)
        node = {k: v for k, v in resolved.items() if k not in drop}
    keys = frozenset(str(key) for key in node if not str(key).startswith("_")) if isinstance(node, dict) else frozenset()
    try:
        built = instantiate(node, **kwargs)
    except InstantiationException as exc:
        cause = exc.__cause__ if exc.__cause__ is not None else exc
        if isinstance(cause, ArgumentError) and where is not None and cause.argument in keys:
            raise cause.at(where) from None
        if isinstance(cause, GraphbenchError):
            raise cause from None
        raise ConfigError(f"could not build {what}: {cause}") from None
    if isinstance(built, functools.partial) and where is not None:
        located = LocatedPartial(built.func, *built.args, **built.keywords)
        located.path, located.keys = where, keys
        return located
    return built
