"""The ``sampler`` config group as a :class:`Sampler`: ``build_datamodule`` hands the built sampler to
every DataModule, whose layout takes it: one graph is batched by it, many graphs take ``sampler=full``
only (without a ``batch_size``). Its keys are the mini-batch sizes of one-graph datasets
(``sampler.batch_size``)."""

from __future__ import annotations

from omegaconf import DictConfig

from graphbench.config.instantiate import METADATA_KEYS, build
from graphbench.data.samplers.base import Sampler
from graphbench.run.errors import ConfigError


def build_sampler(node: DictConfig | None) -> Sampler | None:
    """The sampler that ``node`` (``cfg.sampler``) configures; ``None`` without a node or a
    ``_target_``. A target that builds no :class:`Sampler` is one clear :class:`ConfigError`."""
    if node is None or node.get("_target_") is None:
        return None
    sampler = build(node, "sampler", METADATA_KEYS)
    if not isinstance(sampler, Sampler):
        raise ConfigError(f"sampler._target_ must build a graphbench Sampler, got {type(sampler).__name__}")
    return sampler
