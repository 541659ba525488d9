"""syn-cora: the H2GCN ``.npz`` format on a fixture written like the official files, the study's split,
and the real files when ../shared/data is present."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from hydra import compose, initialize_config_dir

from graphbench.build.data import build_datamodule
from graphbench.data.io.raw_files import md5sum
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.node import syn_cora
from graphbench.data.sources.node.syn_cora import SynCora, read_h2gcn_npz
from graphbench.vocabulary.errors import ConfigError, DataError
from tests.conftest import real_data_root
from tests.paths import REPO

# 6 nodes: labels, features (6 x 4) and a directed adjacency with a self-loop (2, 2) and a duplicate
LABELS = np.array([0, 1, 0, 1, 2, 2], dtype=np.int32)
FEATURES = np.array(
    [[1, 0, 0, 1], [0, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 1, 1], [1, 0, 0, 0]],
    dtype=np.float32,
)
ADJ = {(0, 1), (1, 2), (2, 2), (3, 4), (4, 3), (5, 0)}


def csr(dense: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    indptr, indices, data = [0], [], []
    for row in dense:
        nz = np.flatnonzero(row)
        indices.extend(nz.tolist())
        data.extend(row[nz].tolist())
        indptr.append(len(indices))
    return np.array(data, dtype=np.float32), np.array(indices, dtype=np.int32), np.array(indptr, dtype=np.int32)


def write_syn_cora(root: Path, homophily: float) -> Path:
    """``syn-cora/h<h>-r1.npz`` in H2GCN's layout (CSR adjacency and features, int32 labels, metadata)."""
    adjacency = np.zeros((6, 6), dtype=np.float32)
    for u, v in ADJ:
        adjacency[u, v] = 1.0
    arrays = {}
    for prefix, dense in (("adj", adjacency), ("attr", FEATURES)):
        data, indices, indptr = csr(dense)
        arrays.update({f"{prefix}_data": data, f"{prefix}_indices": indices, f"{prefix}_indptr": indptr})
        arrays[f"{prefix}_shape"] = np.array(dense.shape, dtype=np.int64)
    path = root / "syn-cora" / f"h{homophily:.2f}-r1.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, labels=LABELS, metadata=np.array("syn-cora fixture"), **arrays)
    return path


@pytest.fixture
def fixture_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "data"
    path = write_syn_cora(root, 0.3)
    monkeypatch.setitem(syn_cora.SYN_CORA_MD5, 0.3, md5sum(path))  # the fixture is not the official file
    return root


def test_reads_the_h2gcn_format_symmetric_without_self_loops(fixture_root: Path) -> None:
    graph = read_h2gcn_npz(fixture_root / "syn-cora" / "h0.30-r1.npz")
    assert graph.x.tolist() == FEATURES.tolist()
    assert graph.y.tolist() == LABELS.tolist()
    expected = sorted({(u, v) for a, b in ADJ if a != b for u, v in ((a, b), (b, a))})
    assert sorted(map(tuple, graph.edge_index.t().tolist())) == expected
    assert graph.edge_index.size(1) == 8  # 0-1, 1-2, 3-4, 5-0, each both ways


def test_source_draws_the_stratified_split_with_its_seed(fixture_root: Path) -> None:
    store, _ = SynCora(homophily=0.3, split_seed=1).build(RawRoot(fixture_root))
    graph = store.get(0)
    # two nodes per class: int(0.6*2)=1 train, int(0.2*2)=0 val, 1 test per class
    assert graph.train_mask.sum() == 3 and graph.val_mask.sum() == 0 and graph.test_mask.sum() == 3
    assert sorted(graph.y[graph.train_mask].tolist()) == [0, 1, 2]
    again, _ = SynCora(homophily=0.3, split_seed=1).build(RawRoot(fixture_root))
    assert torch.equal(again.get(0).train_mask, graph.train_mask)


def test_bad_homophily_is_one_line_listing_the_valid_values() -> None:
    with pytest.raises(ConfigError, match=r"^homophily=0.4 is not a syn-cora graph; valid: 0.0, 0.3, 0.5, 0.7, 1.0$"):
        SynCora(homophily=0.4)


def test_a_file_that_is_not_h2gcn_is_a_data_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.npz"
    np.savez(path, labels=LABELS)
    with pytest.raises(DataError, match="missing arrays"):
        read_h2gcn_npz(path)


def test_the_yaml_builds_it(fixture_root: Path, tmp_path: Path) -> None:
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose(
            "config",
            overrides=[
                "dataset=syn-cora",
                "model=gcn",
                "dataset.homophily=0.3",
                f"paths.data_dir={fixture_root}",
                f"paths.cache_dir={tmp_path / 'c'}",
            ],
        )
    # the study's protocol (conf/recipe/syn-cora.yaml) and GCN (conf/recipe/ncmemo/gcn.yaml)
    assert (cfg.normalization.name, cfg.scheduler.name, cfg.head.name) == ("none", "none", "linear")
    assert (cfg.model.hidden_dim, cfg.model.num_layers, cfg.model.dropout, cfg.model.last_layer_outputs) == (32, 3, 0.0, True)
    assert (cfg.optimizer.lr, cfg.optimizer.weight_decay, cfg.trainer.max_epochs) == (0.01, 5.0e-4, 100)
    dm = build_datamodule(cfg)
    dm.prepare_data()
    dm.setup("fit")
    assert dm.split == "stratified" and dm.info.num_outputs == 3 and dm.graph.num_nodes == 6


@pytest.mark.parametrize(("homophily", "expected"), [(0.0, 0.0), (1.0, 1.0)])
def test_real_files(homophily: float, expected: float) -> None:
    root = real_data_root()
    graph = read_h2gcn_npz(root / "syn-cora" / f"h{homophily:.2f}-r1.npz")
    assert (graph.num_nodes, graph.x.size(1), int(graph.y.max()) + 1) == (1490, 1433, 5)
    same = (graph.y[graph.edge_index[0]] == graph.y[graph.edge_index[1]]).float().mean()
    assert float(same) == pytest.approx(expected, abs=1e-6)
    store, _ = SynCora(homophily=homophily).build(RawRoot(root))  # MD5 of the official file checked
    assert int(store.get(0).train_mask.sum()) == 5 * int(0.6 * 298)
