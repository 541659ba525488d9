from __future__ import annotations

import pickle
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from graphbench.data.datamodules import NodeLevelDataModule
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.io.safe_load import load_planetoid_pickle
from graphbench.data.sources.node.planetoid import Planetoid, read_planetoid
from graphbench.vocabulary.errors import ConfigError, DataError
from tests.conftest import real_data_root
from tests.data.sources.node.one_graph import one_graph_datamodule
from tests.data.sources.node.planetoid_fixture import write_planetoid


def make_dm(root: Path, tmp_path: Path, name: str = "cora", **overrides: Any) -> NodeLevelDataModule:
    return one_graph_datamodule(Planetoid(name=name), name, "public", root, tmp_path, **overrides)


def test_reads_official_format_and_reorders_test_nodes(tmp_path: Path) -> None:
    truth = write_planetoid(tmp_path)
    graph = read_planetoid(RawRoot(tmp_path), "cora")
    assert torch.equal(graph.x, torch.from_numpy(truth["features"]))
    assert torch.equal(graph.y, torch.from_numpy(truth["labels"]))
    assert graph.train_mask.sum() == 12 and graph.train_mask[:12].all()
    assert graph.val_mask.sum() == 500 and graph.val_mask[12:512].all()
    assert graph.test_mask.nonzero().view(-1).tolist() == sorted(truth["test_index"].tolist())
    assert torch.equal(graph.edge_index, torch.from_numpy(truth["edges"]))  # no self-loops, no duplicates


def test_matches_torch_geometric_on_fixture(tmp_path: Path) -> None:
    from torch_geometric.datasets import Planetoid

    write_planetoid(tmp_path, "citeseer", skip_test=525)
    ours = read_planetoid(RawRoot(tmp_path), "citeseer")
    ref = Planetoid(str(tmp_path / "Planetoid"), "CiteSeer")[0]
    for key in ("x", "y", "train_mask", "val_mask", "test_mask"):
        assert torch.equal(ours[key], ref[key]), key
    key = lambda e: set((e[0] * ours.num_nodes + e[1]).tolist())  # noqa: E731
    assert key(ours.edge_index) == key(ref.edge_index)
    assert not ours.x[525].any() and not ours.test_mask[525]  # CiteSeer's isolated test node


class Evil:
    def __reduce__(self):
        return (print, ("pwned",))


def test_unpickler_refuses_arbitrary_objects(tmp_path: Path) -> None:
    path = tmp_path / "ind.cora.x"
    path.write_bytes(pickle.dumps([Evil()], protocol=2))
    with pytest.raises(DataError, match=r"refusing to unpickle (__builtin__|builtins)\.print"):
        load_planetoid_pickle(path)


def test_missing_raw_files_are_all_named(tmp_path: Path) -> None:
    with pytest.raises(DataError) as err:
        make_dm(tmp_path / "nowhere", tmp_path).setup()
    for part in ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index"):
        assert f"Planetoid/Cora/raw/ind.cora.{part}" in str(err.value)
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").glob("*.pt"))


def test_random_split_is_seeded_and_partitions_the_nodes(tmp_path: Path) -> None:
    write_planetoid(tmp_path)
    masks = []
    for seed in (0, 0, 1):
        dm = make_dm(tmp_path, tmp_path, split="random", split_seed=seed)
        dm.setup()
        assert dm.graph is not None
        masks.append(torch.stack([dm.graph.train_mask, dm.graph.val_mask, dm.graph.test_mask]))
    assert torch.equal(masks[0], masks[1]) and not torch.equal(masks[0], masks[2])
    assert (masks[0].sum(0) == 1).all()  # disjoint and covering
    assert masks[0].sum(1).tolist() == [round(0.6 * 532), round(0.2 * 532), 532 - round(0.6 * 532) - round(0.2 * 532)]


def test_loader_yields_the_full_graph_with_masks_and_normalized_features(tmp_path: Path) -> None:
    write_planetoid(tmp_path)
    dm = make_dm(tmp_path, tmp_path, normalize_features=True)
    dm.setup()
    info = dm.info
    assert (info.level, info.num_outputs, info.node_features.kind, info.node_features.dim) == ("node", 3, "dense", 6)
    for loader in (dm.train_dataloader(), dm.val_dataloader(), dm.test_dataloader()):
        (batch,) = list(loader)
        assert batch.num_nodes == 532 and batch.train_mask.sum() == 12
        assert torch.allclose(batch.x.sum(1), torch.ones(532))


def test_bad_split_name_lists_valid_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"valid: \['public', 'random', 'igb'\]"):
        make_dm(tmp_path, tmp_path, split="geom-gcn")


@pytest.mark.real_data
@pytest.mark.parametrize(
    ("name", "folder", "stats"),
    [("cora", "Cora", (2708, 10556, 1433, 7, 140)), ("citeseer", "CiteSeer", (3327, 9104, 3703, 6, 120))],
)
def test_real_files_match_published_statistics_and_pyg(tmp_path: Path, name: str, folder: str, stats: tuple[int, ...]) -> None:
    root = real_data_root()
    graph = read_planetoid(RawRoot(root), name)
    assert (
        graph.num_nodes,
        graph.edge_index.size(1),
        graph.x.size(1),
        int(graph.y.max()) + 1,
        int(graph.train_mask.sum()),
    ) == stats
    assert (int(graph.val_mask.sum()), int(graph.test_mask.sum())) == (500, 1000)
    from torch_geometric.datasets import Planetoid

    shutil.copytree(root / "Planetoid" / folder, tmp_path / folder)  # PyG writes next to the raw files
    ref = Planetoid(str(tmp_path), folder)[0]
    assert torch.equal(graph.x, ref.x) and torch.equal(graph.y, ref.y) and torch.equal(graph.test_mask, ref.test_mask)
    assert np.array_equal(
        np.sort((graph.edge_index[0] * 10**5 + graph.edge_index[1]).numpy()),
        np.sort((ref.edge_index[0] * 10**5 + ref.edge_index[1]).numpy()),
    )
