from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from graphbench.data.datamodules import NodeLevelDataModule
from graphbench.data.sources.node.wikics import WikiCS
from graphbench.vocabulary.errors import ConfigError, DataError
from tests.data.sources.node.one_graph import one_graph_datamodule


def write_wikics(root: Path, num_nodes: int = 15, seed: int = 0) -> dict[str, Any]:
    """``WikiCS/raw/data.json`` in the official format (features, labels, links, 20 train/val/stopping
    masks, one test mask)."""
    rng = np.random.default_rng(seed)
    raw = {
        "features": rng.random((num_nodes, 4)).round(3).tolist(),
        "labels": rng.integers(10, size=num_nodes).tolist(),
        "links": [sorted(set(rng.integers(num_nodes, size=2).tolist()) - {i}) for i in range(num_nodes)],
        "train_masks": (rng.random((20, num_nodes)) < 0.5).tolist(),
        "val_masks": (rng.random((20, num_nodes)) < 0.3).tolist(),
        "stopping_masks": (rng.random((20, num_nodes)) < 0.3).tolist(),
        "test_mask": (rng.random(num_nodes) < 0.4).tolist(),
    }
    (root / "WikiCS" / "raw").mkdir(parents=True, exist_ok=True)
    (root / "WikiCS" / "raw" / "data.json").write_text(json.dumps(raw))
    return raw


def make_dm(root: Path, tmp_path: Path, **overrides: Any) -> NodeLevelDataModule:
    return one_graph_datamodule(WikiCS(), "wikics", "official", root, tmp_path, **overrides)


def test_reads_official_json_like_torch_geometric(tmp_path: Path) -> None:
    from torch_geometric.datasets import WikiCS

    raw = write_wikics(tmp_path)
    dm = make_dm(tmp_path, tmp_path, split_index=19)
    dm.setup()
    graph = dm.graph
    assert graph is not None
    ref = WikiCS(str(tmp_path / "WikiCS"), is_undirected=True)[0]
    assert torch.equal(graph.x, ref.x) and torch.equal(graph.y, ref.y)
    assert torch.equal(graph.edge_index, ref.edge_index)
    assert torch.equal(graph.train_mask, ref.train_mask[:, 19]) and torch.equal(graph.val_mask, ref.val_mask[:, 19])
    assert graph.test_mask.tolist() == raw["test_mask"]
    assert dm.info.node_features.dim == 4


def test_split_index_range_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"0\.\.19"):
        make_dm(tmp_path, tmp_path, split_index=20)
    with pytest.raises(DataError, match=r"WikiCS/raw/data.json"):
        make_dm(tmp_path, tmp_path).setup()
