"""Feature-similarity rewiring on a four-node graph whose pairwise cosine similarities are all distinct.

Features are unit vectors at angles 0°, 10°, 30°, 80°: cos similarity falls with the angle between
them, so from most to least similar the pairs are 01 (10°), 12 (20°), 02 (30°), 23 (50°), 13 (70°),
03 (80°). The graph has the edges 0-3, 1-2, 2-3 (both directions) and a self-loop at 1.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch_geometric.data import Data

from graphbench.transforms import rewiring
from graphbench.transforms.rewiring import RewireFeatureSimilarity
from graphbench.vocabulary.errors import ConfigError, DataError

ANGLES = [0.0, 10.0, 30.0, 80.0]
X = torch.tensor([[math.cos(math.radians(a)), math.sin(math.radians(a))] for a in ANGLES])


def undirected(*pairs: tuple[int, int]) -> list[tuple[int, int]]:
    return sorted({(u, v) for a, b in pairs for u, v in ((a, b), (b, a))})


def graph(edges: list[tuple[int, int]]) -> Data:
    return Data(x=X, edge_index=torch.tensor(edges, dtype=torch.long).t(), num_nodes=4)


def edges_of(data: Data) -> list[tuple[int, int]]:
    return sorted(map(tuple, data.edge_index.t().tolist()))  # type: ignore[arg-type]


BASE = [*undirected((0, 3), (1, 2), (2, 3)), (1, 1)]


def test_add_connects_the_most_similar_non_edges() -> None:
    out = RewireFeatureSimilarity(budget=2, mode="add")(graph(BASE))
    # non-edges 01 (10°), 02 (30°), 13 (70°): the two most similar are 01 and 02
    assert edges_of(out) == sorted(BASE + undirected((0, 1), (0, 2)))


def test_delete_cuts_the_least_similar_edges() -> None:
    out = RewireFeatureSimilarity(budget=2, mode="delete")(graph(BASE))
    # edges 03 (80°), 12 (20°), 23 (50°): the two least similar are 03 and 23; the self-loop stays
    assert edges_of(out) == sorted([*undirected((1, 2)), (1, 1)])


def test_both_adds_and_deletes_the_budget_each() -> None:
    out = RewireFeatureSimilarity(budget=1, mode="both")(graph(BASE))
    assert edges_of(out) == sorted([*undirected((0, 1), (1, 2), (2, 3)), (1, 1)])


def test_a_budget_beyond_the_candidates_takes_them_all_and_zero_changes_nothing() -> None:
    assert edges_of(RewireFeatureSimilarity(budget=10, mode="add")(graph(BASE))) == sorted(
        BASE + undirected((0, 1), (0, 2), (1, 3))
    )
    assert edges_of(RewireFeatureSimilarity(budget=10, mode="delete")(graph(BASE))) == [(1, 1)]
    assert edges_of(RewireFeatureSimilarity(budget=0, mode="both")(graph(BASE))) == sorted(BASE)


def test_directed_edges_outside_the_rewired_pairs_stay_directed() -> None:
    out = RewireFeatureSimilarity(budget=1, mode="delete")(graph([(0, 3), (1, 2), (2, 3), (3, 2)]))
    assert edges_of(out) == [(1, 2), (2, 3), (3, 2)]  # the pair 03 (one direction) is cut


def test_ties_go_to_the_first_pairs_and_row_blocks_do_not_change_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    same = Data(x=torch.ones(5, 3), edge_index=torch.tensor([[0, 1], [1, 0]]), num_nodes=5)
    out = RewireFeatureSimilarity(budget=3, mode="add")(same)
    assert edges_of(out) == undirected((0, 1), (0, 2), (0, 3), (0, 4))  # 01 exists; then 02, 03, 04
    whole = RewireFeatureSimilarity(budget=2, mode="add")(graph(BASE))
    monkeypatch.setattr(rewiring, "MAX_BLOCK_ELEMENTS", 4)  # one row per block
    assert edges_of(RewireFeatureSimilarity(budget=2, mode="add")(graph(BASE))) == edges_of(whole)
    assert edges_of(RewireFeatureSimilarity(budget=3, mode="add")(same)) == edges_of(out)


def test_input_is_untouched_and_repr_is_the_cache_key() -> None:
    data = graph(BASE)
    before = data.edge_index.clone()
    RewireFeatureSimilarity(budget=2, mode="both")(data)
    assert torch.equal(data.edge_index, before)
    assert repr(RewireFeatureSimilarity(budget=7, mode="add")) == "RewireFeatureSimilarity(budget=7, mode='add')"


def test_bad_arguments_and_edge_features_are_one_clear_error() -> None:
    with pytest.raises(ConfigError, match=r"transform\.mode='swap' is not valid; valid: \['add', 'delete', 'both'\]"):
        RewireFeatureSimilarity(budget=1, mode="swap")
    with pytest.raises(ConfigError, match="non-negative integer"):
        RewireFeatureSimilarity(budget=-1)
    with pytest.raises(DataError, match="edge_attr"):
        RewireFeatureSimilarity(budget=1)(Data(x=X, edge_index=torch.tensor([[0], [1]]), edge_attr=torch.ones(1, 2)))
