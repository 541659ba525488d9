"""GraphDataModule's shared machinery on a hand-made dataset: channelwise feature normalization."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch_geometric.data import Data

from graphbench.data.datamodules.graph_level import GraphDataModule
from graphbench.data.store.graph_store import GraphStore
from graphbench.info import DatasetInfo, FeatureSpec
from graphbench.errors import ConfigError


class ToyDataModule(GraphDataModule):
    """Three one-node-per-row graphs: train = graphs 0 and 1, val = 2, test = 2."""

    @property
    def info(self) -> DatasetInfo:
        return self.make_info(num_outputs=1, node_features=FeatureSpec("dense", dim=2), edge_features=None)

    def build(self) -> tuple[GraphStore, dict[str, torch.Tensor]]:
        empty = torch.zeros(2, 0, dtype=torch.long)
        graphs = [
            Data(x=torch.tensor([[1.0, 10.0], [3.0, 10.0]]), edge_index=empty, y=torch.tensor([[0.0]])),
            Data(x=torch.tensor([[5.0, 30.0], [7.0, 30.0]]), edge_index=empty, y=torch.tensor([[1.0]])),
            Data(x=torch.tensor([[4.0, 20.0]]), edge_index=empty, y=torch.tensor([[1.0]])),
        ]
        return GraphStore.from_list(graphs), {"train": torch.tensor([0, 1]), "val": torch.tensor([2]), "test": torch.tensor([2])}


def make(tmp_path: Path, **kwargs: Any) -> ToyDataModule:
    return ToyDataModule(name="toy", data_dir=tmp_path, cache_dir=tmp_path / "cache", batch_size=4, task_type="binary",
                         metric="accuracy", higher_is_better=True, **kwargs)


def test_channelwise_uses_training_statistics_only(tmp_path: Path) -> None:
    dm = make(tmp_path, feature_norm="channelwise")
    dm.setup()
    train_x = torch.cat([dm.dataset[0].x, dm.dataset[1].x])
    # training rows: channel 0 = 1,3,5,7 (mean 4, population std sqrt(5)); channel 1 = 10,10,30,30 (mean 20, std 10)
    assert torch.allclose(train_x.mean(0), torch.zeros(2), atol=1e-6)
    assert torch.allclose(dm.dataset[2].x, torch.tensor([[0.0, 0.0]]), atol=1e-6)
    assert torch.allclose(dm.dataset[0].x[0], torch.tensor([-3 / 5**0.5, -1.0]), atol=1e-5)


def test_without_feature_norm_features_are_untouched(tmp_path: Path) -> None:
    dm = make(tmp_path)
    dm.setup()
    assert torch.equal(dm.dataset[2].x, torch.tensor([[4.0, 20.0]]))


def test_unknown_feature_norm_lists_valid_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="channelwise"):
        make(tmp_path, feature_norm="zscore")
