"""How the ``sampler`` config group reaches a DataModule: ``build_datamodule`` passes the built
sampler as the ``sampler`` argument to the DataModules that take one (node and link level:
``takes_sampler``), and to no other; there, only ``sampler=full`` is valid. Its keys are the
mini-batch sizes of one-graph datasets (``sampler.batch_size``)."""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig

from graphbench.config.instantiate import METADATA_KEYS, build
from graphbench.data.datamodules.config import datamodule_class
from graphbench.data.samplers.base import Sampler
from graphbench.run.errors import ConfigError


def sampler_argument(cfg: DictConfig) -> dict[str, Any]:
    """``{"sampler": <Sampler>}`` for a DataModule that takes a sampler, ``{}`` for one that does not
    (then ``cfg.sampler`` must be ``full``; anything else is one clear :class:`ConfigError`)."""
    node = cfg.get("sampler")
    if node is None or node.get("_target_") is None:
        return {}
    name = str(node.get("name", "?"))
    if not datamodule_class(cfg.dataset).takes_sampler:
        if name != "full" or node.get("batch_size") is not None:
            what = f"sampler={name}" if name != "full" else "sampler.batch_size"
            raise ConfigError(
                f"{what} applies to one-graph node- and link-level datasets; dataset "
                f"'{cfg.dataset.name}' is graph-level and is mini-batched by graphs (dataset.batch_size): use sampler=full"
            )
        return {}
    sampler = build(node, "sampler", METADATA_KEYS)
    if not isinstance(sampler, Sampler):
        raise ConfigError(f"sampler._target_ must build a graphbench Sampler, got {type(sampler).__name__}")
    return {"sampler": sampler}
