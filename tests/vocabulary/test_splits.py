"""The split names every room shares: their order is the order splits are built, logged and reported."""

from __future__ import annotations

from graphbench.vocabulary.splits import SPLITS


def test_the_splits_are_train_val_test_in_that_order() -> None:
    assert SPLITS == ("train", "val", "test")
