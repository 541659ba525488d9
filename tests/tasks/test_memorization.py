"""task=memorization: its arguments checked before anything is built, and the run's wiring of node sets, models,
scores and metrics with stand-in models (a whole run, through the CLI: ``tests/e2e/test_memorization_cli.py``)."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from omegaconf import DictConfig, OmegaConf
from torch.nn import functional as F

from graphbench.analysis import memorization
from graphbench.analysis.memorization import CSV_FILENAME
from graphbench.tasks.memorization import run_memorization
from graphbench.vocabulary.errors import ConfigError
from tests.data.sources.node.test_geom_gcn import write_geom_gcn
from tests.e2e.test_memorization_cli import TINY


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"checkpoint": "worst"}, r"^task.checkpoint='worst' is not valid; valid: \["),
        ({"num_seeds": 0}, r"^task.num_seeds must be a positive integer, got 0$"),
        ({"num_seeds": True}, r"^task.num_seeds must be a positive integer, got True$"),
        ({"tau": "high"}, r"^task.tau must be a number, got 'high'$"),
        ({"init": "same"}, r"^task.init='same' is not valid; valid: \['shared', 'independent'\]$"),
    ],
)
def test_bad_arguments_are_refused_before_anything_is_built(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        run_memorization(OmegaConf.create({}), **kwargs)


@pytest.mark.parametrize(
    ("init", "seeds"),
    [
        ("shared", [4, 4, 5, 5]),  # f and g of seed cfg.seed * num_seeds + i from the same weights
        ("independent", [4, 1_000_004, 5, 1_000_005]),  # g from its own seed, as the study's code
    ],
)
def test_the_task_wires_the_node_sets_to_the_two_models_and_scores_every_node(
    tmp_path: Path, compose_cfg: Callable[..., DictConfig], monkeypatch: pytest.MonkeyPatch, init: str, seeds: list[int]
) -> None:
    """Models stand in for training: each puts probability 1 on the true label of its training nodes and is
    uniform over the C = 5 classes elsewhere. Then mem = 1 - 1/5 on candidates (f trains on them, g does not),
    -(1 - 1/5) on independent nodes, 0 on shared and control nodes."""
    trained: list[int] = []

    def train_on_nodes(cfg, train_mask, val_mask, seed, run_dir, datamodule, checkpoint):
        labels = datamodule.graph.y.view(-1)
        probs = torch.full((labels.numel(), 5), 0.2)
        probs[train_mask] = F.one_hot(labels[train_mask], 5).float()
        trained.append(seed)
        return probs

    monkeypatch.setattr(memorization, "train_on_nodes", train_on_nodes)
    write_geom_gcn(tmp_path / "data", "texas", num_nodes=60)
    cfg = compose_cfg([*TINY, "seed=2", f"paths.data_dir={tmp_path / 'data'}"])
    record = run_memorization(cfg, num_seeds=2, plots=False, init=init)
    assert record.status == "completed" and trained == seeds
    with (tmp_path / "run" / CSV_FILENAME).open() as handle:
        mem = {(row["set"], float(row["mem"])) for row in csv.DictReader(handle)}
    assert {name for name, _ in mem} == {"shared", "candidate", "independent", "control"}
    expected = {"shared": 0.0, "candidate": 0.8, "independent": -0.8, "control": 0.0}
    assert all(value == pytest.approx(expected[name]) for name, value in mem)
    metrics = record.metrics
    assert (metrics["memorization/rate"], metrics["memorization/rate_control"]) == (1.0, 0.0)
    assert metrics["memorization/mean_candidate"] == pytest.approx(0.8)
    assert metrics["memorization/mean_independent"] == pytest.approx(-0.8)
    assert metrics["lds/candidate_not_memorized"] is None  # every candidate is memorized


def write_two_components(root: Path, sizes: tuple[int, int]) -> dict:
    """Texas's raw layout with its edges replaced by two paths: nodes 0..a-1 and a..a+b-1."""
    written = write_geom_gcn(root, "texas", num_nodes=sum(sizes))
    a = sizes[0]
    path_edges = [(i, i + 1) for i in range(a - 1)] + [(i, i + 1) for i in range(a, sum(sizes) - 1)]
    (root / "WebKB" / "texas" / "raw" / "out1_graph_edges.txt").write_text(
        "node_id\tnode_id\n" + "".join(f"{u}\t{v}\n" for u, v in path_edges)
    )
    return written


@pytest.mark.parametrize(
    ("overrides", "kept"),
    [
        ([], 50),  # auto on a real dataset: the largest connected component, as the study's real-world code
        (["+dataset.synthetic=true"], 65),  # auto on a synthetic one (syn-cora): the whole graph
        (["task.graph=whole"], 65),
        (["+dataset.synthetic=true", "task.graph=largest_component"], 50),
    ],
)
def test_the_protocol_runs_on_the_largest_connected_component_of_a_real_graph(
    tmp_path: Path,
    compose_cfg: Callable[..., DictConfig],
    monkeypatch: pytest.MonkeyPatch,
    overrides: list[str],
    kept: int,
) -> None:
    """Two components, the paths 0 - 1 - ... - 49 and 50 - ... - 64: the largest is the first, induced, its
    nodes in their order; every node set and every model sees that graph alone."""
    seen: list = []

    def train_on_nodes(cfg, train_mask, val_mask, seed, run_dir, datamodule, checkpoint):
        graph = datamodule.graph
        seen.append((graph.num_nodes, graph.edge_index.clone(), graph.x.clone(), graph.y.clone(), train_mask.numel()))
        return torch.full((graph.num_nodes, 5), 0.2)

    monkeypatch.setattr(memorization, "train_on_nodes", train_on_nodes)
    written = write_two_components(tmp_path / "data", (50, 15))
    cfg = compose_cfg([*TINY, f"paths.data_dir={tmp_path / 'data'}", *overrides])
    record = run_memorization(cfg, num_seeds=1, plots=False, graph=cfg.task.graph)
    assert record.status == "completed" and len(seen) == 2
    for num_nodes, edge_index, x, y, mask_size in seen:
        assert num_nodes == mask_size == kept
        path = [(i, i + 1) for i in range(kept - 1) if i != 49]  # 49 - 50 is no edge
        assert set(map(tuple, edge_index.t().tolist())) == set(path)  # as written: Geom-GCN edges are directed
        features = torch.from_numpy(written["features"][:kept])
        torch.testing.assert_close(x, features / features.sum(dim=1, keepdim=True))  # texas: row-normalized
        assert torch.equal(y.view(-1), torch.from_numpy(written["labels"][:kept]))
    with (tmp_path / "run" / CSV_FILENAME).open() as handle:
        assert {int(row["node"]) for row in csv.DictReader(handle)} <= set(range(kept))


def test_an_unknown_graph_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"^task.graph='lcc' is not valid; valid: \['auto', 'largest_component', 'whole'\]$"):
        run_memorization(OmegaConf.create({"dataset": {}}), graph="lcc")


def write_labelled_path(root: Path, num_nodes: int) -> None:
    """Texas's raw layout as one path 0 - 1 - ... - (n-1) (one component, kept whole by either graph) whose node
    i has label i % 5: 13 nodes per class for n = 65."""
    write_geom_gcn(root, "texas", num_nodes=num_nodes)
    raw = root / "WebKB" / "texas" / "raw"
    rows = "".join(f"{i}\t1,0,1,0,1\t{i % 5}\n" for i in range(num_nodes))
    (raw / "out1_node_feature_label.txt").write_text("node_id\tfeature\tlabel\n" + rows)
    (raw / "out1_graph_edges.txt").write_text("node_id\tnode_id\n" + "".join(f"{i}\t{i + 1}\n" for i in range(num_nodes - 1)))


PER_CLASS = {"train": 35, "val": 10, "train per class": [7] * 5, "val per class": [2] * 5}  # int(0.6 * 13), int(0.2 * 13)
UNIFORM = {"train": 39, "val": 13}  # round(0.6 * 65), round(0.2 * 65)


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ([], UNIFORM),  # auto on a real dataset: uniform, as the study's real-world code (RandomNodeSplit)
        (["+dataset.synthetic=true"], PER_CLASS),  # auto on a synthetic one (syn-cora): per class, as its syn-cora code
        (["task.stratified=true"], PER_CLASS),
        (["+dataset.synthetic=true", "task.stratified=false"], UNIFORM),
    ],
)
def test_auto_draws_the_studys_split_for_the_kind_of_graph(
    tmp_path: Path,
    compose_cfg: Callable[..., DictConfig],
    monkeypatch: pytest.MonkeyPatch,
    overrides: list[str],
    expected: dict,
) -> None:
    """65 nodes, 13 per class: a split per class puts int(0.6 * 13) = 7 of each class in train and int(0.2 * 13) = 2
    in val (35 and 10), a uniform one round(0.6 * 65) = 39 and round(0.2 * 65) = 13 nodes. f trains on S_S and S_C,
    g on S_S and S_I: together the split's training nodes."""
    masks: list[tuple[torch.Tensor, torch.Tensor]] = []

    def train_on_nodes(cfg, train_mask, val_mask, seed, run_dir, datamodule, checkpoint):
        masks.append((train_mask.clone(), val_mask.clone()))
        return torch.full((datamodule.graph.num_nodes, 5), 0.2)

    monkeypatch.setattr(memorization, "train_on_nodes", train_on_nodes)
    write_labelled_path(tmp_path / "data", 65)
    cfg = compose_cfg([*TINY, f"paths.data_dir={tmp_path / 'data'}", *overrides])
    record = run_memorization(cfg, num_seeds=1, plots=False, stratified=cfg.task.stratified)
    assert record.status == "completed" and len(masks) == 2
    (train_f, val), (train_g, val_g) = masks
    assert torch.equal(val, val_g) and not (train_f & val).any()
    train = train_f | train_g
    labels = torch.arange(65) % 5
    assert (int(train.sum()), int(val.sum())) == (expected["train"], expected["val"])
    if "train per class" in expected:
        assert torch.bincount(labels[train], minlength=5).tolist() == expected["train per class"]
        assert torch.bincount(labels[val], minlength=5).tolist() == expected["val per class"]


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_an_unknown_split_is_refused(value: object) -> None:
    with pytest.raises(ConfigError, match=rf"^task.stratified={value!r} is not valid; valid: true, false, auto$"):
        run_memorization(OmegaConf.create({"dataset": {}}), stratified=value)  # type: ignore[arg-type]
