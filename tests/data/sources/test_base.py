"""``Source`` and ``OneGraphNodeSource``: the defaults a new source inherits, one graph's split masks checked,
and its facts read from the set-up store (a whole new dataset: ``tests/data/test_adding_a_dataset.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch_geometric.data import Data

from graphbench.data.info import DataFacts, FeatureSpec
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.base import OneGraphNodeSource, Source
from graphbench.vocabulary.errors import DataError


class Path4(OneGraphNodeSource):
    """The path 0 - 1 - 2 - 3, two features, labels 0, 2, 1, 0; nodes 0-1 train, 2 val, 3 test."""

    def __init__(self, train_mask: torch.Tensor | None = None) -> None:
        self.train_mask = torch.tensor([True, True, False, False]) if train_mask is None else train_mask

    def read_graph(self, raw: RawRoot) -> Data:
        return Data(
            x=torch.arange(8.0).view(4, 2),
            edge_index=torch.tensor([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]]),
            y=torch.tensor([0, 2, 1, 0]),
            train_mask=self.train_mask,
            val_mask=torch.tensor([False, False, True, False]),
            test_mask=torch.tensor([False, False, False, True]),
        )


def test_a_source_is_abstract_and_its_optional_hooks_default_to_nothing(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="abstract"):
        Source()  # type: ignore[abstract]
    source = Path4()
    assert (source.level, source.one_graph, source.version, source.fixed_split, source.num_fixed_splits) == (
        "node",
        True,
        "1",
        "official",
        1,
    )
    assert source.cache_params() == () and source.expected_num_graphs() is None
    assert source.check_raw_files(RawRoot(tmp_path)) is None


def test_one_graph_is_stored_whole_and_every_split_points_at_it(tmp_path: Path) -> None:
    store, splits = Path4().build(RawRoot(tmp_path))
    assert len(store) == 1 and {k: v.tolist() for k, v in splits.items()} == {"train": [0], "val": [0], "test": [0]}
    graph = store[0]
    assert graph.train_mask.tolist() == [True, True, False, False] and graph.y.tolist() == [0, 2, 1, 0]


def test_the_facts_are_read_from_the_set_up_store(tmp_path: Path) -> None:
    source = Path4()
    assert source.facts() is None
    store, _ = source.build(RawRoot(tmp_path))
    assert source.facts(store) == DataFacts(num_outputs=3, node_features=FeatureSpec("dense", dim=2), edge_features=None)


@pytest.mark.parametrize(
    ("mask", "shape"),
    [(torch.tensor([1, 1, 0, 0]), "(4,) torch.int64"), (torch.ones(3, dtype=torch.bool), "(3,) torch.bool")],
)
def test_a_mask_that_is_not_one_boolean_per_node_is_refused(tmp_path: Path, mask: torch.Tensor, shape: str) -> None:
    with pytest.raises(DataError) as err:
        Path4(train_mask=mask).build(RawRoot(tmp_path))
    assert str(err.value) == f"Path4: train_mask must be a boolean tensor with 4 rows, got {shape}"
