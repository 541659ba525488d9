"""Flickr (GraphSAINT raw layout) and Reddit (PyG/DGL raw layout) read from tiny hand-written graphs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.node.saint_sets import Flickr, Reddit, read_flickr, read_reddit
from graphbench.vocabulary.errors import DataError
from tests.data.sources.node.one_graph import one_graph_datamodule

# an undirected 5-node graph: 0-1, 0-2, 1-2, 3-4
PAIRS = [(0, 1), (0, 2), (1, 2), (3, 4)]


def _adjacency() -> sp.csr_matrix:
    rows = [u for u, v in PAIRS] + [v for u, v in PAIRS]
    cols = [v for u, v in PAIRS] + [u for u, v in PAIRS]
    return sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(5, 5))


def write_flickr(root: Path) -> np.ndarray:
    raw = root / "Flickr" / "raw"
    raw.mkdir(parents=True)
    adj = _adjacency()
    np.savez(raw / "adj_full.npz", data=adj.data, indices=adj.indices, indptr=adj.indptr, shape=np.array(adj.shape))
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    np.save(raw / "feats.npy", x)
    (raw / "class_map.json").write_text(json.dumps({"0": 2, "1": 0, "2": 1, "3": 1, "4": 0}))
    (raw / "role.json").write_text(json.dumps({"tr": [0, 1], "va": [2], "te": [3, 4]}))
    return x


def write_reddit(root: Path) -> np.ndarray:
    raw = root / "Reddit" / "raw"
    raw.mkdir(parents=True)
    x = np.arange(15, dtype=np.float32).reshape(5, 3) / 2
    np.savez(raw / "reddit_data.npz", feature=x, label=np.array([4, 1, 1, 0, 3]), node_types=np.array([1, 1, 2, 3, 3]))
    sp.save_npz(raw / "reddit_graph.npz", _adjacency().tocoo())
    return x


@pytest.mark.parametrize(
    ("name", "write", "labels", "num_classes"),
    [("flickr", write_flickr, [2, 0, 1, 1, 0], 3), ("reddit", write_reddit, [4, 1, 1, 0, 3], 5)],
)
def test_reads_the_official_layout_like_torch_geometric(
    name: str, write: Callable[[Path], np.ndarray], labels: list[int], num_classes: int, tmp_path: Path
) -> None:
    """Flickr: GraphSAINT's layout (role.json splits); Reddit: PyG's/DGL's (node_types 1/2/3)."""
    from torch_geometric import datasets

    x = write(tmp_path)
    source, reference = {"flickr": (Flickr(), datasets.Flickr), "reddit": (Reddit(), datasets.Reddit)}[name]
    dm = one_graph_datamodule(source, name, "official", tmp_path, tmp_path)
    dm.setup()
    graph = dm.graph
    assert graph is not None
    assert graph.edge_index.tolist() == [[0, 0, 1, 1, 2, 2, 3, 4], [1, 2, 0, 2, 0, 1, 4, 3]]
    assert torch.equal(graph.x, torch.from_numpy(x)) and graph.y.tolist() == labels
    assert [graph[f"{s}_mask"].nonzero().view(-1).tolist() for s in ("train", "val", "test")] == [[0, 1], [2], [3, 4]]
    assert (dm.info.num_outputs, dm.info.node_features.dim) == (num_classes, x.shape[1])
    ref = reference(str(tmp_path / name.capitalize()))[0]
    for key in ("x", "edge_index", "y", "train_mask", "val_mask", "test_mask"):
        assert torch.equal(graph[key], ref[key]), key


def test_missing_and_bad_files(tmp_path: Path) -> None:
    with pytest.raises(DataError) as info:
        read_reddit(RawRoot(tmp_path))
    assert "Reddit/raw/reddit_graph.npz" in str(info.value) and "https://data.dgl.ai/dataset/reddit.zip" in str(info.value)
    with pytest.raises(DataError, match=r"Flickr/raw/role\.json"):
        read_flickr(RawRoot(tmp_path))
    write_flickr(tmp_path)
    (tmp_path / "Flickr" / "raw" / "role.json").write_text(json.dumps({"tr": [0], "va": [9], "te": []}))
    with pytest.raises(DataError, match=r"outside 0\.\.4"):
        read_flickr(RawRoot(tmp_path))
