"""The NodeLevelDataModule of a one-graph node-classification source, as its dataset YAML builds it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphbench.build.data import datamodule_from_keys
from graphbench.data.datamodules import NodeLevelDataModule
from graphbench.data.sources.base import Source


def one_graph_datamodule(
    source: Source, name: str, default_split: str, root: Path, tmp_path: Path, **overrides: Any
) -> NodeLevelDataModule:
    """Full batch, multiclass accuracy, no download; ``overrides`` replace any dataset key (``split`` too)."""
    args: dict[str, Any] = dict(
        name=name,
        data_dir=root,
        cache_dir=tmp_path / "cache",
        task_type="multiclass",
        metric="accuracy",
        higher_is_better=True,
        split=default_split,
        download=False,
    )
    args.update(overrides)
    return datamodule_from_keys(NodeLevelDataModule, source, args)
