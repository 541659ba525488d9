"""MNIST / CIFAR10 superpixels on fixtures in PyG's GNNBenchmarkDataset raw layout (<NAME>/raw/<NAME>_v2.pt)."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import pytest
import torch

from graphbench.data.datamodules import GraphLevelDataModule
from graphbench.data.sources.graph.benchmarking_superpixels import BenchmarkingSuperpixels
from graphbench.vocabulary.errors import ConfigError, DataError
from tests.data._datamodules import graph_level


def make_graph(gen: torch.Generator, n: int, channels: int, label: int) -> dict:
    src = torch.arange(n).repeat_interleave(2)
    dst = (src + torch.tensor([1, 2]).repeat(n)) % n
    return {
        "x": torch.rand(n, channels, generator=gen),
        "pos": torch.rand(n, 2, generator=gen),
        "edge_index": torch.stack([src, dst]),
        "edge_attr": torch.rand(2 * n, generator=gen),
        "y": torch.tensor([label]),
    }


def write_superpixels(root: Path, name: str, channels: int) -> None:
    raw = root / name / "raw"
    raw.mkdir(parents=True)
    gen = torch.Generator().manual_seed(0)
    splits = [[make_graph(gen, 5 + i, channels, i % 10) for i in range(count)] for count in (6, 2, 3)]
    torch.save(splits, raw / f"{name}_v2.pt")


def datamodule(root: Path, cache: Path, name: str) -> GraphLevelDataModule:
    source = BenchmarkingSuperpixels(superpixel_name=name)
    return graph_level(source, root, cache, name=name.lower(), task_type="multiclass", metric="accuracy", higher_is_better=True)


@pytest.mark.parametrize(("name", "channels"), [("MNIST", 1), ("CIFAR10", 3)])
def test_reads_official_layout_like_pyg(tmp_path: Path, name: str, channels: int) -> None:
    from torch_geometric.datasets import GNNBenchmarkDataset

    write_superpixels(tmp_path / "data", name, channels)
    dm = datamodule(tmp_path / "data", tmp_path / "cache", name)
    dm.setup()
    assert [len(dm.splits[s]) for s in ("train", "val", "test")] == [6, 2, 3]
    shutil.copytree(tmp_path / "data" / name, tmp_path / "pyg" / name)
    for split in ("train", "val", "test"):
        reference = GNNBenchmarkDataset(str(tmp_path / "pyg"), name, split=split)
        for a, b in zip(reference, dm.split_dataset(split)):
            assert torch.allclose(torch.cat([a.x, a.pos], dim=1), b.x) and torch.equal(a.edge_index, b.edge_index)
            assert torch.allclose(a.edge_attr.view(-1, 1), b.edge_attr) and a.y.tolist() == b.y.tolist()
    info = dm.info
    assert info.node_features.dim == channels + 2 and info.edge_features.dim == 1 and info.num_outputs == 10
    batch = next(iter(dm.train_dataloader()))
    assert batch.x.dtype == torch.float32 and batch.y.dtype == torch.long and batch.num_graphs == 4


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
def test_refuses_files_that_are_not_plain_tensors(tmp_path: Path) -> None:
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    (raw / "MNIST_v2.pt").write_bytes(pickle.dumps(Path("x")))
    with pytest.raises(DataError, match="not a readable list of tensor dicts"):
        datamodule(tmp_path, tmp_path / "cache", "MNIST").setup()


def test_unknown_name_lists_the_valid_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"valid: \['CIFAR10', 'MNIST'\]"):
        datamodule(tmp_path, tmp_path, "SVHN")
