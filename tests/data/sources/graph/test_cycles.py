from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from graphbench.data.datamodules import GraphLevelDataModule
from graphbench.data.sources.graph.cycles import Cycles, generate_cycles, tree_graph, unicyclic_graph
from graphbench.vocabulary.errors import ConfigError
from tests.data._datamodules import graph_level


def cycle_lengths(edge_index: np.ndarray) -> list[int]:
    """Lengths of the cycles of a graph with at most one cycle: peel off leaves, count what remains."""
    n = int(edge_index.max()) + 1
    neighbours = [set() for _ in range(n)]
    for u, v in edge_index.T:
        neighbours[u].add(v)
    alive = set(range(n))
    leaves = [u for u in alive if len(neighbours[u]) <= 1]
    while leaves:
        u = leaves.pop()
        alive.discard(u)
        for v in neighbours[u]:
            neighbours[v].discard(u)
            if v in alive and len(neighbours[v]) <= 1:
                leaves.append(v)
        neighbours[u] = set()
    return [len(alive)] if alive else []


def test_tree_has_no_cycle_and_n_minus_1_edges() -> None:
    edge_index = tree_graph(20, np.random.default_rng(0))
    assert edge_index.shape == (2, 38)
    assert cycle_lengths(edge_index) == []


@pytest.mark.parametrize("length", [3, 4, 6, 8])
def test_unicyclic_graph_has_exactly_one_cycle_of_that_length(length: int) -> None:
    rng = np.random.default_rng(length)
    edge_index = None
    while edge_index is None:
        edge_index = unicyclic_graph(30, length, rng)
    assert edge_index.shape == (2, 60)
    assert cycle_lengths(edge_index) == [length]


def test_generation_is_balanced_deterministic_and_labels_match_structure() -> None:
    graphs, y = generate_cycles(40, 10, 16, 6, [], seed=3)
    again, y_again = generate_cycles(40, 10, 16, 6, [], seed=3)
    assert torch.equal(y, y_again) and all(np.array_equal(a, b) for a, b in zip(graphs, again))
    assert y.sum().item() == 20
    for edge_index, label in zip(graphs, y.view(-1).tolist()):
        assert cycle_lengths(edge_index) == ([6] if label == 1 else [])


def test_hard_variant_negatives_hold_another_cycle_length() -> None:
    graphs, y = generate_cycles(20, 10, 16, 6, [4, 5], seed=1)
    for edge_index, label in zip(graphs, y.view(-1).tolist()):
        lengths = cycle_lengths(edge_index)
        assert lengths == [6] if label == 1 else lengths[0] in (4, 5)


def make_dm(tmp_path: Path, batch_size: int = 8, **overrides: object) -> GraphLevelDataModule:
    source_args = dict(num_train=20, num_val=6, num_test=6, min_nodes=8, max_nodes=12)
    source_args.update(overrides)
    return graph_level(
        Cycles(**source_args),
        tmp_path / "data",
        tmp_path / "cache",
        name="cycles",
        task_type="binary",
        metric="accuracy",
        higher_is_better=True,
        batch_size=batch_size,
    )


def test_datamodule_splits_cache_and_indices(tmp_path: Path) -> None:
    dm = make_dm(tmp_path)
    dm.setup()
    assert [len(dm.splits[s]) for s in ("train", "val", "test")] == [20, 6, 6]
    batch = next(iter(dm.test_dataloader()))
    assert batch.idx.tolist() == list(range(26, 32))
    assert len(list((tmp_path / "cache").glob("cycles-*.pt"))) == 1
    assert not (tmp_path / "data").exists()  # nothing is written into the data root
    other = make_dm(tmp_path, generation_seed=1)
    other.setup()
    assert len(list((tmp_path / "cache").glob("cycles-*.pt"))) == 2  # parameters are part of the cache key


def test_invalid_parameters_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="other_lengths"):
        make_dm(tmp_path, other_lengths=(6,))
    with pytest.raises(ConfigError, match="batch_size"):
        make_dm(tmp_path, batch_size=0)
