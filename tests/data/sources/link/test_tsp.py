"""TSP edge classification (Benchmarking GNNs): the PyG layout read, labels on every edge, unsafe files refused."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest
import torch

from graphbench.build.data import datamodule_from_keys
from graphbench.data.datamodules import LinkLevelDataModule
from graphbench.data.sources.link.tsp import TSP
from graphbench.vocabulary.errors import DataError
from tests.data.sources.link.link_fixtures import write_tsp

COMMON: dict[str, Any] = dict(task_type="binary", higher_is_better=True, split="official")


def test_tsp_reads_pyg_layout(tmp_path: Path) -> None:
    raw = write_tsp(tmp_path)
    keys = dict(name="tsp", data_dir=tmp_path, cache_dir=tmp_path / "cache", batch_size=4, metric="f1", **COMMON)
    dm = datamodule_from_keys(LinkLevelDataModule, TSP(), keys)
    dm.setup()
    info = dm.info
    assert (info.level, info.node_features.dim, info.edge_features.dim) == ("link", 2, 1)  # type: ignore[union-attr]
    assert {k: v.tolist() for k, v in dm.splits.items()} == {"train": list(range(6)), "val": [6, 7], "test": [8, 9]}
    assert dm.dataset is not None
    graph = dm.dataset[7]
    assert torch.equal(graph.edge_label, raw[1][1]["y"]) and torch.equal(graph.edge_label_index, graph.edge_index)
    batch = next(iter(dm.test_dataloader()))
    assert batch.edge_label_index.max() < batch.num_nodes and torch.equal(batch.edge_label_index, batch.edge_index)
    (tmp_path / "TSP" / "raw" / "TSP_v2.pt").write_bytes(pickle.dumps([print], protocol=2))
    with pytest.raises(DataError, match=r"TSP_v2.pt"):
        datamodule_from_keys(LinkLevelDataModule, TSP(), {**keys, "cache_dir": tmp_path / "cache2"}).setup()
