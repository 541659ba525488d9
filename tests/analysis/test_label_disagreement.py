"""LDS_k (NCMemo's label disagreement score) on a hand-built five-node feature space."""

from __future__ import annotations

import pytest
import torch

from graphbench.analysis.label_disagreement import label_disagreement
from graphbench.vocabulary.errors import ConfigError

# five nodes on a line at 0, 1, 3, 6, 10 with labels 0, 0, 1, 1, 0
X = torch.tensor([[0.0], [1.0], [3.0], [6.0], [10.0]])
Y = torch.tensor([0, 0, 1, 1, 0])
ALL = torch.arange(5)


def test_lds_on_five_nodes_by_hand() -> None:
    # k=2 nearest others: 0 -> {1, 2}; 1 -> {0, 2}; 2 -> {1, then 0 and 3 tie at 3: 0, the lower index};
    # 3 -> {2, 4}; 4 -> {3, 2}
    lds = label_disagreement(X, Y, ALL, ALL, k=2)
    assert lds.tolist() == [0.5, 0.5, 1.0, 0.5, 1.0]


def test_lds_with_k3_and_k1() -> None:
    # k=3: 0 -> {1,2,3}: labels 0,1,1 vs 0 -> 2/3; 4 -> {3,2,1}: 1,1,0 vs 0 -> 2/3
    lds = label_disagreement(X, Y, torch.tensor([0, 4]), ALL, k=3)
    assert lds.tolist() == pytest.approx([2 / 3, 2 / 3])
    # k=1: 0 -> 1, 1 -> 0, 2 -> 1, 3 -> 2, 4 -> 3
    assert label_disagreement(X, Y, ALL, ALL, k=1).tolist() == [0.0, 0.0, 1.0, 0.0, 1.0]


def test_neighbours_come_from_the_reference_set_only() -> None:
    # reference {0, 1, 2} (S_S ∪ S_C); node 3 -> {2, 1}: labels 1, 0 vs 1 -> 0.5; node 4 -> {2, 1}: 1, 0 vs 0 -> 0.5
    lds = label_disagreement(X, Y, torch.tensor([3, 4]), torch.tensor([2, 0, 1]), k=2)
    assert lds.tolist() == [0.5, 0.5]
    # a node of the reference set is never its own neighbour: node 2 -> {1, 0}, both label 0 vs 1
    assert label_disagreement(X, Y, torch.tensor([2]), torch.tensor([0, 1, 2]), k=2).tolist() == [1.0]


def test_too_few_reference_nodes_or_bad_k_is_one_clear_error() -> None:
    with pytest.raises(ConfigError, match="at least 3 reference nodes"):
        label_disagreement(X, Y, torch.tensor([0]), torch.tensor([0, 1, 2]), k=3)
    with pytest.raises(ConfigError, match="positive integer"):
        label_disagreement(X, Y, ALL, ALL, k=0)
