"""The transform a DataModule applies once to its data and caches: the graph transform of the
``transform`` config node (e.g. ``+transform=rewire_feature_similarity``), then the positional
encoding of ``pe``, so that the encoding describes the transformed graph."""

from __future__ import annotations

from omegaconf import DictConfig
from torch_geometric.transforms import BaseTransform, Compose

from graphbench.config.instantiate import METADATA_KEYS, build


def dataset_transform(cfg: DictConfig, first: BaseTransform | None = None) -> BaseTransform | None:
    """``first`` (a task's own, e.g. :class:`~torch_geometric.transforms.LargestConnectedComponents`),
    ``cfg.transform`` then ``cfg.pe.transform`` (any may be absent), composed; ``None`` when none is
    set. The DataModule caches the result keyed by its ``repr``."""
    transforms = [first] if first is not None else []
    if cfg.get("transform"):
        transforms.append(build(cfg.transform, "transform", METADATA_KEYS))
    if cfg.pe.get("transform"):
        transforms.append(build(cfg.pe.transform, "pe.transform", METADATA_KEYS))
    if not transforms:
        return None
    return transforms[0] if len(transforms) == 1 else Compose(transforms)
