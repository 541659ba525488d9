"""``collate``, ``collate_concatenated`` and ``node_split_masks`` on two hand-made graphs: slices at the graph
boundaries, graph-local edge ids kept, and wrong row counts named."""

from __future__ import annotations

import pytest
import torch

from graphbench.data.store.collate import collate, collate_concatenated, node_split_masks
from graphbench.vocabulary.errors import DataError

# graph 0: 3 nodes, edges 0-1, 1-2; graph 1: 2 nodes, edge 1->0
EDGES = [torch.tensor([[0, 1], [1, 2]]), torch.tensor([[1], [0]])]
X = [torch.tensor([[1.0], [2.0], [3.0]]), torch.tensor([[4.0], [5.0]])]
EDGE_ATTR = [torch.tensor([7, 8]), torch.tensor([9])]


def test_per_graph_tensors_are_concatenated_with_slices_at_the_graph_boundaries() -> None:
    data, slices = collate(EDGES, {"x": X}, {"edge_attr": EDGE_ATTR}, {"y": torch.tensor([0, 1])})
    assert data.edge_index.tolist() == [[0, 1, 1], [1, 2, 0]]  # graph-local ids, not offset
    assert data.x.flatten().tolist() == [1.0, 2.0, 3.0, 4.0, 5.0] and data.edge_attr.tolist() == [7, 8, 9]
    assert {key: value.tolist() for key, value in slices.items()} == {
        "edge_index": [0, 2, 3],
        "x": [0, 3, 5],
        "edge_attr": [0, 2, 3],
        "y": [0, 1, 2],
    }


def test_concatenated_input_gives_the_same_store() -> None:
    data, slices = collate_concatenated(
        torch.tensor([3, 2]),
        torch.tensor([2, 1]),
        torch.cat(EDGES, dim=1).int(),
        {"x": torch.cat(X)},
        graph={"y": torch.tensor([0, 1])},
    )
    assert data.edge_index.dtype == torch.long and data.edge_index.tolist() == [[0, 1, 1], [1, 2, 0]]
    assert slices["x"].tolist() == [0, 3, 5] and slices["y"].tolist() == [0, 1, 2]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"node": {"x": torch.zeros(4, 1)}}, "node attribute 'x' has 4 rows for 5 nodes"),
        ({"node": {"x": torch.zeros(5, 1)}, "edge": {"w": torch.zeros(2)}}, "edge attribute 'w' has 2 rows for 3 edges"),
        ({"node": {"x": torch.zeros(5, 1)}, "graph": {"y": torch.zeros(3)}}, "graph attribute 'y' has 3 rows for 2 graphs"),
    ],
)
def test_a_wrong_row_count_names_the_attribute(kwargs: dict, message: str) -> None:
    with pytest.raises(DataError, match=f"^{message}$"):
        collate_concatenated(torch.tensor([3, 2]), torch.tensor([2, 1]), torch.cat(EDGES, dim=1), **kwargs)


def test_no_node_attribute_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one node attribute"):
        collate_concatenated(torch.tensor([1]), torch.tensor([0]), torch.zeros(2, 0, dtype=torch.long), {})


def test_node_split_masks_mark_every_node_of_the_splits_graphs() -> None:
    masks = node_split_masks(torch.tensor([2, 1, 3]), {"train": torch.tensor([0, 2]), "val": torch.tensor([1])})
    assert {key: mask.tolist() for key, mask in masks.items()} == {
        "train_mask": [True, True, False, True, True, True],
        "val_mask": [False, False, True, False, False, False],
    }
