from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from graphbench.data.datamodules import NodeLevelDataModule
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.node.geom_gcn import GEOM_GCN_DATASETS, GeomGCN, read_geom_gcn
from graphbench.vocabulary.errors import ConfigError, DataError
from tests.conftest import real_data_root
from tests.data.sources.node.one_graph import one_graph_datamodule


def write_geom_gcn(root: Path, name: str, num_nodes: int = 12, num_features: int = 5, seed: int = 0) -> dict[str, np.ndarray]:
    """The Geom-GCN raw layout: ``out1_node_feature_label.txt`` (dense vectors for WebKB, non-zero
    indices for Actor), ``out1_graph_edges.txt`` and 10 ``<prefix>_split_0.6_0.2_<i>.npz`` (uint8 masks).
    Rows are written in shuffled node order."""
    rng = np.random.default_rng(seed)
    folder, prefix, fmt = GEOM_GCN_DATASETS[name]
    raw = root / folder / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    features = (rng.random((num_nodes, num_features)) < 0.4).astype(np.float32)
    features[:, -1] = 1.0  # every node has a non-zero feature (Actor lists indices)
    labels = rng.integers(5, size=num_nodes)
    header = "node_id\tfeature\tlabel" if fmt == "dense" else f"node_id\tfeature(feature_amount:{num_features})\tlabel"
    lines = [header]
    for i in rng.permutation(num_nodes):
        value = (
            ",".join(str(int(v)) for v in features[i])
            if fmt == "dense"
            else ",".join(str(j) for j in np.flatnonzero(features[i]))
        )
        lines.append(f"{i}\t{value}\t{labels[i]}")
    (raw / "out1_node_feature_label.txt").write_text("\n".join(lines) + "\n")
    edges = rng.integers(num_nodes, size=(3 * num_nodes, 2))
    edges = np.concatenate([edges, edges[:2]])  # duplicates are merged
    (raw / "out1_graph_edges.txt").write_text("node_id\tnode_id\n" + "".join(f"{a}\t{b}\n" for a, b in edges))
    splits = []
    for i in range(10):
        part = rng.integers(3, size=num_nodes)
        masks = {k: (part == j).astype(np.uint8) for j, k in enumerate(("train_mask", "val_mask", "test_mask"))}
        np.savez(raw / f"{prefix}_split_0.6_0.2_{i}.npz", **masks)
        splits.append(masks)
    return {"features": features, "labels": labels, "edges": np.unique(edges, axis=0).T, "splits": splits}


def make_dm(root: Path, tmp_path: Path, name: str, **overrides: Any) -> NodeLevelDataModule:
    return one_graph_datamodule(GeomGCN(name=name), name, "geom-gcn", root, tmp_path, **overrides)


@pytest.mark.parametrize("name", ["texas", "actor"])
def test_reads_raw_layout_like_torch_geometric(tmp_path: Path, name: str) -> None:
    from torch_geometric.datasets import Actor

    truth = write_geom_gcn(tmp_path, name)
    graph = read_geom_gcn(RawRoot(tmp_path), name)
    assert torch.equal(graph.x, torch.from_numpy(truth["features"]))
    assert torch.equal(graph.y, torch.from_numpy(truth["labels"]))
    assert torch.equal(graph.edge_index, torch.from_numpy(truth["edges"]))
    assert graph.train_mask.shape == (12, 10)
    assert torch.equal(graph.val_mask[:, 3], torch.from_numpy(truth["splits"][3]["val_mask"].astype(bool)))
    if name == "texas":  # PyG reads WebKB rows in file order, so compare only with ordered ids
        return
    ref = Actor(str(tmp_path / "Actor"))[0]
    for key in ("x", "y", "edge_index", "train_mask", "val_mask", "test_mask"):
        assert torch.equal(graph[key], ref[key]), key


def test_split_index_selects_one_of_ten_and_out_of_range_is_a_clear_error(tmp_path: Path) -> None:
    truth = write_geom_gcn(tmp_path, "cornell")
    dm = make_dm(tmp_path, tmp_path, "cornell", split_index=7)
    dm.setup()
    assert dm.graph is not None
    assert torch.equal(dm.graph.test_mask, torch.from_numpy(truth["splits"][7]["test_mask"].astype(bool)))
    assert dm.info.num_outputs == int(truth["labels"].max()) + 1
    for bad in (10, -1):
        with pytest.raises(ConfigError, match=r"split_index must be an integer in 0\.\.9"):
            make_dm(tmp_path, tmp_path, "cornell", split_index=bad)
    assert make_dm(tmp_path, tmp_path, "cornell", split_index="3").layout.split_index == 3  # typed by the dataset schema


def test_missing_files_are_all_named(tmp_path: Path) -> None:
    with pytest.raises(DataError) as err:
        make_dm(tmp_path, tmp_path, "wisconsin").setup()
    message = str(err.value)
    assert "WebKB/wisconsin/raw/out1_graph_edges.txt" in message and "wisconsin_split_0.6_0.2_9.npz" in message


@pytest.mark.real_data
@pytest.mark.parametrize(
    ("name", "stats"),
    [("texas", (183, 325, 1703)), ("cornell", (183, 298, 1703)), ("wisconsin", (251, 515, 1703)), ("actor", (7600, 30019, 932))],
)
def test_real_files_match_torch_geometric(tmp_path: Path, name: str, stats: tuple[int, int, int]) -> None:
    from torch_geometric.datasets import Actor, WebKB

    root = real_data_root()
    graph = read_geom_gcn(RawRoot(root), name)
    assert (graph.num_nodes, graph.edge_index.size(1), graph.x.size(1)) == stats
    assert graph.train_mask.shape == (stats[0], 10) and int(graph.y.max()) + 1 == 5
    folder = GEOM_GCN_DATASETS[name][0]
    shutil.copytree(root / folder, tmp_path / folder)  # PyG writes next to the raw files
    ref = Actor(str(tmp_path / "Actor"))[0] if name == "actor" else WebKB(str(tmp_path / "WebKB"), name)[0]
    for key in ("x", "y", "edge_index", "train_mask", "val_mask", "test_mask"):
        assert torch.equal(graph[key], ref[key]), key
