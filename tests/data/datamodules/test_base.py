"""graphbench.data.datamodules.base: what every DataModule shares, on a hand-made graph-level source:
argument checks, channelwise feature normalization, info before and after setup, the level check, the
cache key, the loader of one split and the batch transfer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch_geometric.data import Data

from graphbench.data.datamodules import GraphLevelDataModule
from graphbench.data.info import DataFacts, FeatureSpec
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.base import Source
from graphbench.data.store.graph_store import GraphStore
from graphbench.vocabulary.errors import ConfigError, DataError
from tests.data._datamodules import graph_level

#: the protocol of the toy source
TOY: dict[str, Any] = dict(task_type="binary", metric="accuracy", higher_is_better=True)


class ToySource(Source):
    """Three one-node-per-row graphs: train = graphs 0 and 1, val = 2, test = 2."""

    def facts(self, store: GraphStore | None = None) -> DataFacts:
        return DataFacts(num_outputs=1, node_features=FeatureSpec("dense", dim=2), edge_features=None)

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, torch.Tensor]]:
        empty = torch.zeros(2, 0, dtype=torch.long)
        graphs = [
            Data(x=torch.tensor([[1.0, 10.0], [3.0, 10.0]]), edge_index=empty, y=torch.tensor([[0.0]])),
            Data(x=torch.tensor([[5.0, 30.0], [7.0, 30.0]]), edge_index=empty, y=torch.tensor([[1.0]])),
            Data(x=torch.tensor([[4.0, 20.0]]), edge_index=empty, y=torch.tensor([[1.0]])),
        ]
        return GraphStore.from_list(graphs), {"train": torch.tensor([0, 1]), "val": torch.tensor([2]), "test": torch.tensor([2])}


def make(tmp_path: Path, batch_on_device: Any = False, **keys: Any) -> GraphLevelDataModule:
    """The toy source's DataModule: 4 graphs per batch, ``keys`` of its :class:`DatasetConfig` replaced."""
    return graph_level(ToySource(), tmp_path, tmp_path / "cache", name="toy", batch_on_device=batch_on_device, **{**TOY, **keys})


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


class DataReadingSource(ToySource):
    """The toy graphs, with the facts read from the data (like a TU dataset's number of classes)."""

    def facts(self, store: GraphStore | None = None) -> DataFacts | None:
        if store is None:
            return None
        return DataFacts(
            num_outputs=int(store.collated.y.max()) + 1, node_features=FeatureSpec("dense", dim=2), edge_features=None
        )


def test_info_reads_no_data_facts_from_the_data_come_after_setup(tmp_path: Path) -> None:
    assert make(tmp_path).info.num_outputs == 1  # stated by the source
    dm = graph_level(
        DataReadingSource(),
        tmp_path,
        tmp_path / "cache",
        name="toy",
        task_type="multiclass",
        metric="accuracy",
        higher_is_better=True,
    )
    with pytest.raises(DataError, match=r"toy: DataReadingSource reads its facts .* call setup\(\) before reading info"):
        _ = dm.info
    assert not (tmp_path / "cache").exists()  # asking built nothing
    dm.setup()
    assert dm.info.num_outputs == 2


class NodeToySource(ToySource):
    level = "node"


def test_a_source_of_another_level_names_the_datamodule_to_use(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError,
        match=r"NodeToySource is node-level, but GraphLevelDataModule serves graph-level sources; set dataset._target_",
    ):
        graph_level(NodeToySource(), tmp_path, tmp_path, name="toy", **TOY)
    with pytest.raises(ConfigError, match="must build a graphbench Source"):
        graph_level("toy", tmp_path, tmp_path, name="toy", **TOY)  # type: ignore[arg-type]


def test_cache_is_keyed_by_source_parameters(tmp_path: Path) -> None:
    class Sized(ToySource):
        def __init__(self, size: int) -> None:
            self.size = size

        def cache_params(self) -> tuple[int]:
            return (self.size,)

    for size in (1, 2, 2):
        graph_level(Sized(size), tmp_path, tmp_path / "cache", name="toy", **TOY).setup()
    assert len(list((tmp_path / "cache").glob("toy-*.pt"))) == 2


def test_batches_stay_as_they_are_on_the_cpu_and_move_elsewhere(tmp_path: Path) -> None:
    from torch_geometric.data import Batch

    dm = make(tmp_path)
    graph = Data(x=torch.ones(2, 2), edge_index=torch.tensor([[0], [1]]))
    batch = Batch.from_data_list([graph])
    assert dm.transfer_batch_to_device(batch, torch.device("cpu"), 0) is batch
    moved = dm.transfer_batch_to_device(Batch.from_data_list([graph]), torch.device("meta"), 0)
    assert moved.x.device.type == "meta" and moved.edge_index.device.type == "meta" and moved.batch.device.type == "meta"


def test_the_loader_of_one_split_is_its_layouts_in_order(tmp_path: Path) -> None:
    dm = make(tmp_path)  # not set up: the loader sets it up
    (val,) = list(dm.loader("val"))
    assert val.x.tolist() == [[4.0, 20.0]] and val.y.tolist() == [[1.0]]
    (train,) = list(dm.loader("train"))
    assert train.x[:, 1].tolist() == [10.0, 10.0, 30.0, 30.0]  # unshuffled: graphs 0 and 1, in order
    with pytest.raises(ConfigError, match=r"^split 'valid' is not one of \['train', 'val', 'test'\]$"):
        dm.loader("valid")


@pytest.mark.parametrize("bad", [-1, 1.5, "2"])
def test_num_workers_must_be_a_non_negative_integer(tmp_path: Path, bad: object) -> None:
    with pytest.raises(ConfigError, match=rf"^dataset.num_workers must be a non-negative integer, got {bad!r}$"):
        make(tmp_path, num_workers=bad)


class NoTestSplit(ToySource):
    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, torch.Tensor]]:
        store, splits = super().build(raw)
        del splits["test"]
        return store, splits


def test_a_missing_split_is_a_data_error(tmp_path: Path) -> None:
    dm = graph_level(NoTestSplit(), tmp_path, tmp_path / "cache", name="toy", **TOY)
    with pytest.raises(DataError, match=r"^toy: split 'test' missing; found \['train', 'val'\]$"):
        dm.setup()


def test_raw_file_md5s_come_after_prepare_data(tmp_path: Path) -> None:
    dm = make(tmp_path)
    with pytest.raises(DataError, match=r"^toy: call prepare_data\(\) or setup\(\) before raw_file_md5s\(\)$"):
        dm.raw_file_md5s()
    dm.prepare_data()
    assert dm.raw_file_md5s() == {}  # a generated source reads no raw files
