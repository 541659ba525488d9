"""ogbn-arxiv / ogbn-products / ogbn-proteins read from tiny graphs written in OGB's raw layout."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import torch

from graphbench.data.datamodules import NodeLevelDataModule
from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.node.ogbn import OGBN_DATASETS, OGBNodeProperty, aggregate_edge_features, read_ogbn
from graphbench.metrics.registry import make_metric
from graphbench.vocabulary.errors import ConfigError, DataError
from tests.data.sources.node.one_graph import one_graph_datamodule

# 5 nodes, 4 raw edges (one self-loop-free path plus a chord); node 4 has no edge
EDGES = np.array([[0, 1], [1, 2], [2, 3], [0, 2]])
DENSE = FeatureSpec("dense", dim=2)
SPLIT = {"train": [0, 3], "valid": [1], "test": [2, 4]}


def _write_csv_gz(path: Path, rows: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as handle:
        for row in np.atleast_2d(np.asarray(rows)):
            handle.write(",".join(str(v) for v in row) + "\n")


def write_ogbn(root: Path, ogb_name: str) -> dict[str, np.ndarray]:
    """The files of ``<name>.zip`` as OGB unpacks them, for the 5-node graph above."""
    spec = OGBN_DATASETS[ogb_name]
    folder = root / spec.folder
    raw = folder / "raw"
    _write_csv_gz(raw / "edge.csv.gz", EDGES)
    _write_csv_gz(raw / "num-node-list.csv.gz", [[5]])
    _write_csv_gz(raw / "num-edge-list.csv.gz", [[len(EDGES)]])
    out: dict[str, np.ndarray] = {}
    if spec.has_node_attr:
        out["x"] = np.arange(15, dtype=np.float32).reshape(5, 3) / 4
        _write_csv_gz(raw / "node-feat.csv.gz", out["x"])
        out["y"] = np.array([[3], [0], [2], [2], [1]])
    else:
        out["edge_attr"] = np.array([[0.1, 0.5], [0.2, 0.0], [0.4, 1.0], [0.3, 0.25]], dtype=np.float32)
        _write_csv_gz(raw / "edge-feat.csv.gz", out["edge_attr"])
        out["y"] = np.random.default_rng(0).integers(2, size=(5, spec.num_tasks))
        out["y"][:, :2] = [[1, 0], [0, 1], [1, 1], [0, 0], [1, 0]]
    _write_csv_gz(raw / "node-label.csv.gz", out["y"])
    for name, index in SPLIT.items():
        _write_csv_gz(folder / "split" / spec.split / f"{name}.csv.gz", np.array(index).reshape(-1, 1))
    (folder / "RELEASE_v1.txt").write_text("")  # in OGB's zips: tells OGB's own reader the version
    (folder / "processed").mkdir()  # OGB's reader writes its processed copy there
    return out


def make_dm(root: Path, tmp_path: Path, ogb_name: str, **source_args: Any) -> NodeLevelDataModule:
    task = ("multilabel", "rocauc") if ogb_name == "ogbn-proteins" else ("multiclass", "accuracy")
    source = OGBNodeProperty(ogb_name=ogb_name, **source_args)
    return one_graph_datamodule(source, ogb_name, "official", root, tmp_path, task_type=task[0], metric=task[1])


def test_specs_agree_with_ogbs_master_csv() -> None:
    import ogb.nodeproppred

    master = pd.read_csv(Path(ogb.nodeproppred.__file__).parent / "master.csv", index_col=0, keep_default_na=False)
    for name, spec in OGBN_DATASETS.items():
        row = master[name]
        assert spec.folder == name.replace("-", "_") and spec.download_name == row["download_name"]
        assert spec.split == row["split"] and spec.add_inverse_edge == (row["add_inverse_edge"] == "True")
        assert (spec.num_tasks, spec.num_classes, spec.eval_metric) == (
            int(row["num tasks"]),
            int(row["num classes"]),
            row["eval metric"],
        )
        assert (spec.has_node_attr, spec.has_edge_attr) == (row["has_node_attr"] == "True", row["has_edge_attr"] == "True")
        assert spec.url == row["url"]


def test_arxiv_directed_and_undirected(tmp_path: Path) -> None:
    raw = write_ogbn(tmp_path, "ogbn-arxiv")
    directed = read_ogbn(RawRoot(tmp_path), "ogbn-arxiv", undirected=False)
    assert directed.edge_index.tolist() == [[0, 1, 2, 0], [1, 2, 3, 2]]  # add_inverse_edge is False for arxiv
    dm = make_dm(tmp_path, tmp_path, "ogbn-arxiv", undirected=True)
    dm.setup()
    graph = dm.graph
    assert graph is not None and graph.num_nodes == 5
    assert graph.edge_index.tolist() == [[0, 0, 1, 1, 2, 2, 2, 3], [1, 2, 0, 2, 0, 1, 3, 2]]
    assert torch.equal(graph.x, torch.from_numpy(raw["x"])) and graph.y.tolist() == [3, 0, 2, 2, 1]
    assert graph.train_mask.nonzero().view(-1).tolist() == [0, 3]
    assert graph.val_mask.nonzero().view(-1).tolist() == [1]
    assert graph.test_mask.nonzero().view(-1).tolist() == [2, 4]
    assert (dm.info.num_outputs, dm.info.node_features.dim) == (40, 3)  # OGB's 40 classes, whatever the fixture holds


def test_products_matches_ogbs_own_reader(tmp_path: Path) -> None:
    from ogb.nodeproppred import NodePropPredDataset

    raw = write_ogbn(tmp_path, "ogbn-products")
    graph = read_ogbn(RawRoot(tmp_path), "ogbn-products")
    # both directions, each edge followed by its inverse (OGB's add_inverse_edge)
    assert graph.edge_index.tolist() == [[0, 1, 1, 2, 2, 3, 0, 2], [1, 0, 2, 1, 3, 2, 2, 0]]
    ref = NodePropPredDataset("ogbn-products", root=str(tmp_path))
    ref_graph, ref_labels = ref[0]
    assert np.array_equal(graph.edge_index.numpy(), ref_graph["edge_index"])
    assert np.array_equal(graph.x.numpy(), ref_graph["node_feat"]) and np.array_equal(graph.x.numpy(), raw["x"])
    assert np.array_equal(graph.y.numpy(), ref_labels.reshape(-1))
    split = ref.get_idx_split()
    for ours, theirs in (("train", "train"), ("val", "valid"), ("test", "test")):
        assert graph[f"{ours}_mask"].nonzero().view(-1).tolist() == sorted(split[theirs].tolist())


def test_proteins_features_are_the_mean_of_incident_edge_features(tmp_path: Path) -> None:
    raw = write_ogbn(tmp_path, "ogbn-proteins")
    dm = make_dm(tmp_path, tmp_path, "ogbn-proteins")
    dm.setup()
    graph = dm.graph
    assert graph is not None and graph.edge_index.size(1) == 8 and "edge_attr" not in graph
    # node 0: edges (0,1) [.1,.5] and (0,2) [.3,.25]; node 2: (1,2) [.2,0], (2,3) [.4,1], (0,2) [.3,.25]; node 4: none
    expected = torch.tensor([[0.2, 0.375], [0.15, 0.25], [0.3, 1.25 / 3], [0.4, 1.0], [0.0, 0.0]])
    assert torch.allclose(graph.x, expected)
    assert graph.y.dtype == torch.float and graph.y.shape == (5, 112)
    assert torch.equal(graph.y, torch.from_numpy(raw["y"]).float())
    assert (dm.info.num_outputs, dm.info.node_features.dim, dm.info.task_type) == (112, 2, "multilabel")
    summed = read_ogbn(RawRoot(tmp_path), "ogbn-proteins", edge_aggr="sum")
    assert torch.allclose(summed.x, torch.tensor([[0.4, 0.75], [0.3, 0.5], [0.9, 1.25], [0.4, 1.0], [0.0, 0.0]]))


def test_proteins_aggregation_equals_ogbs_example() -> None:
    """OGB's gnn.py: ``adj_t.mean(dim=1)`` over the graph with both directions of every edge."""
    from torch_geometric.utils import scatter

    edge = torch.tensor([[0, 1, 2, 0, 3], [1, 2, 3, 2, 3]])  # with a self-loop (3, 3)
    attr = torch.arange(10, dtype=torch.float).view(5, 2)
    both = torch.stack([edge, edge.flip(0)], dim=2).reshape(2, -1)
    reference = scatter(attr.repeat_interleave(2, dim=0), both[1], dim=0, dim_size=5, reduce="mean")
    assert torch.allclose(aggregate_edge_features(edge, attr, 5, "mean"), reference)


def test_metric_equals_ogbs_evaluator() -> None:
    from ogb.nodeproppred import Evaluator

    rng = np.random.default_rng(1)
    y_true = rng.integers(2, size=(30, 112))
    y_true[:, 5] = 0  # a task with one class only: skipped by OGB and by the metric
    y_pred = rng.normal(size=(30, 112)).astype(np.float32)
    metric = make_metric(DatasetInfo("ogbn-proteins", "node", "multilabel", 112, "rocauc", True, DENSE, None))
    metric.update(torch.from_numpy(y_pred), torch.from_numpy(y_true).float())
    expected = Evaluator("ogbn-proteins").eval({"y_true": y_true, "y_pred": y_pred})["rocauc"]
    assert float(metric.compute()) == pytest.approx(expected, abs=1e-6)

    labels = rng.integers(40, size=50)
    logits = rng.normal(size=(50, 40)).astype(np.float32)
    accuracy = make_metric(DatasetInfo("ogbn-arxiv", "node", "multiclass", 40, "accuracy", True, DENSE, None))
    accuracy.update(torch.from_numpy(logits), torch.from_numpy(labels))
    expected = Evaluator("ogbn-arxiv").eval({"y_true": labels.reshape(-1, 1), "y_pred": logits.argmax(1).reshape(-1, 1)})["acc"]
    assert float(accuracy.compute()) == pytest.approx(expected, abs=1e-6)


def test_missing_files_are_named_with_the_archive(tmp_path: Path) -> None:
    with pytest.raises(DataError) as info:
        read_ogbn(RawRoot(tmp_path / "empty"), "ogbn-arxiv")
    message = str(info.value)
    assert "ogbn_arxiv/raw/edge.csv.gz" in message and "ogbn_arxiv/split/time/valid.csv.gz" in message
    assert "http://snap.stanford.edu/ogb/data/nodeproppred/arxiv.zip" in message


def test_bad_inputs(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="ogbn-arxiv"):
        OGBNodeProperty(ogb_name="ogbn-papers100M")
    with pytest.raises(ConfigError, match="mean"):
        OGBNodeProperty(ogb_name="ogbn-proteins", edge_aggr="max")
    write_ogbn(tmp_path, "ogbn-arxiv")
    _write_csv_gz(tmp_path / "ogbn_arxiv" / "raw" / "num-edge-list.csv.gz", [[7]])
    with pytest.raises(DataError, match="expected 7 edges"):
        read_ogbn(RawRoot(tmp_path), "ogbn-arxiv")


def test_cli_names_the_missing_files_and_where_they_go(tmp_path: Path) -> None:
    """``python run.py dataset=ogbn-arxiv model=sage sampler=neighbor`` without the raw files."""
    from tests.e2e.test_cli import run_cli

    root = tmp_path / "nowhere"
    args = ["dataset=ogbn-arxiv", "model=sage", "sampler=neighbor", f"paths.data_dir={root}", f"hydra.run.dir={tmp_path / 'run'}"]
    proc = run_cli(args, tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    output = proc.stdout + proc.stderr  # the files listed in the log, the error line naming it
    for name in ("raw/edge.csv.gz", "raw/node-feat.csv.gz", "raw/node-label.csv.gz", "split/time/train.csv.gz"):
        assert f"{root}/ogbn_arxiv/{name}" in output, name
    assert "arxiv.zip" in output and f"into {root}/ogbn_arxiv" in output


def test_cli_trains_on_the_proteins_fixture(tmp_path: Path) -> None:
    """The multi-label task end to end: 112 outputs, BCE loss, ROC-AUC over tasks."""
    import json

    from tests.e2e.test_cli import run_cli

    write_ogbn(tmp_path / "data", "ogbn-proteins")
    # a validation split where a task has both labels (rows 1, 2: task 0 is 0 and 1), as ROC-AUC needs
    _write_csv_gz(tmp_path / "data" / "ogbn_proteins" / "split" / "species" / "valid.csv.gz", [[1], [2]])
    run_dir = tmp_path / "run"
    fast = ["trainer.max_epochs=2", "trainer.enable_progress_bar=false", "model.hidden_dim=8", "logger=none"]
    proc = run_cli(
        ["dataset=ogbn-proteins", "model=gcn", f"paths.data_dir={tmp_path / 'data'}", f"hydra.run.dir={run_dir}", *fast], tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((run_dir / "results.json").read_text())
    assert results["status"] == "completed" and {"val/rocauc", "test/rocauc"} <= set(results["metrics"])
