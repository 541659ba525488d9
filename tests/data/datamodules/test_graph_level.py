"""graphbench.data.datamodules.graph_level: GraphLevelDataModule takes many graphs only, and gathers its
mini-batches on the device (``batch_on_device``) as the CPU loaders batch them."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch_geometric.data import Data

from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.base import OneGraphNodeSource
from graphbench.vocabulary.errors import ConfigError
from tests.data._datamodules import graph_level
from tests.data.datamodules.test_base import make


@pytest.mark.parametrize("feature_norm", ["none", "channelwise"])
def test_batches_gathered_on_the_device_are_the_cpu_loaders_batches(tmp_path: Path, feature_norm: str) -> None:
    from graphbench.data.store.loader import GraphIds
    from tests.data.store.test_batching import assert_same_batch

    plain, on_device = (make(tmp_path, feature_norm=feature_norm, batch_on_device=flag) for flag in (False, True))
    plain.setup()
    on_device.setup()
    for split in ("train", "val", "test"):
        torch.manual_seed(5)
        expected = list(getattr(plain, f"{split}_dataloader")())
        torch.manual_seed(5)
        ids = list(getattr(on_device, f"{split}_dataloader")())
        assert len(ids) == len(expected) and all(isinstance(b, GraphIds) for b in ids)
        for graph_ids, batch in zip(ids, expected):
            assert_same_batch(on_device.transfer_batch_to_device(graph_ids, torch.device("cpu"), 0), batch)


def test_batch_on_device_must_be_a_boolean(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^dataset.batch_on_device='yes' must be true or false$"):
        make(tmp_path, batch_on_device="yes")


class OneGraph(OneGraphNodeSource):
    level = "graph"
    fixed_split = "shipped"

    def read_graph(self, raw: RawRoot) -> Data:
        mask = torch.tensor([True, False])
        return Data(
            x=torch.eye(2),
            edge_index=torch.tensor([[0], [1]]),
            y=torch.tensor([0, 1]),
            train_mask=mask,
            val_mask=~mask,
            test_mask=~mask,
        )


def test_one_graph_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^dataset 'one': OneGraph ships one graph; graph-level tasks need many graphs$"):
        graph_level(OneGraph(), tmp_path, tmp_path, name="one", task_type="binary", metric="accuracy", higher_is_better=True)
    assert make(tmp_path, batch_on_device=True).batch_on_device
