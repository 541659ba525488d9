"""Writes a tiny Planetoid dataset in the official raw format (``ind.<name>.*`` protocol-2 pickles of
scipy CSR matrices, numpy arrays and a ``defaultdict(list)``), the way the Planetoid authors did."""

from __future__ import annotations

import pickle
from collections import defaultdict
from pathlib import Path

import numpy as np
import scipy.sparse as sp

FOLDERS = {"cora": "Cora", "citeseer": "CiteSeer", "pubmed": "PubMed"}


def write_planetoid(
    root: Path,
    name: str = "cora",
    *,
    num_train: int = 12,
    num_other: int = 510,
    num_test: int = 10,
    num_classes: int = 3,
    num_features: int = 6,
    skip_test: int | None = None,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """Nodes ``0..num_train+num_other-1`` are in ``allx`` (the first ``num_train`` also in ``x``), the test
    nodes follow, listed in shuffled order in ``test.index`` (``skip_test``: one id left out, a CiteSeer-
    style isolated node). Feature column 0 holds the node id + 1 and columns 1.. a one-hot of the class,
    so that tests can check where each row ended up. Returns the ground truth (``features``, ``labels``,
    ``test_index``, ``edges``) indexed by node id."""
    rng = np.random.default_rng(seed)
    num_known = num_train + num_other
    test_ids = np.arange(num_known, num_known + num_test)
    if skip_test is not None:
        test_ids = test_ids[test_ids != skip_test]
    num_nodes = num_known + num_test
    labels = rng.integers(num_classes, size=num_nodes)
    features = np.zeros((num_nodes, num_features), dtype=np.float32)
    features[:, 0] = np.arange(num_nodes) + 1
    features[np.arange(num_nodes), 1 + labels % (num_features - 1)] = 1.0
    onehot = np.eye(num_classes, dtype=np.int64)[labels]
    test_index = rng.permutation(test_ids)
    adjacency: defaultdict[int, list[int]] = defaultdict(list)
    edges = set()
    for _ in range(3 * num_nodes):
        u, v = (int(a) for a in rng.integers(num_nodes, size=2))
        adjacency[u].append(v)
        adjacency[v].append(u)
        if u != v:
            edges |= {(u, v), (v, u)}
    adjacency[5].append(5)  # a self-loop and a duplicate, which the reader must drop / merge
    adjacency[5].append(int(adjacency[5][0]))
    parts = {
        "x": sp.csr_matrix(features[:num_train]),
        "allx": sp.csr_matrix(features[:num_known]),
        "tx": sp.csr_matrix(features[test_index]),
        "y": onehot[:num_train],
        "ally": onehot[:num_known],
        "ty": onehot[test_index],
        "graph": adjacency,
    }
    raw = root / "Planetoid" / FOLDERS[name] / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    for part, obj in parts.items():
        (raw / f"ind.{name}.{part}").write_bytes(pickle.dumps(obj, protocol=2))
    (raw / f"ind.{name}.test.index").write_text("\n".join(str(i) for i in test_index) + "\n")
    return {"features": features, "labels": labels, "test_index": test_index, "edges": np.array(sorted(edges)).T}
