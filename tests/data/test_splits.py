"""Cross-validation folds: index files and the seeded stratified k-fold."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from graphbench.data.splits import (
    IGB_FRACTIONS,
    check_split_index,
    fold_from_index_files,
    random_split_masks,
    stratified_cv_fold,
    stratified_fold_ids,
)
from graphbench.vocabulary.errors import ConfigError, DataError


@pytest.mark.parametrize("bad", [-1, 10, 2.0, "1", True, None])
def test_wrong_split_index_names_the_valid_range(bad: object) -> None:
    with pytest.raises(ConfigError, match=r"valid values are 0\.\.9"):
        check_split_index(bad, 10, "toy")


def test_stratified_folds_balance_every_class_and_are_deterministic() -> None:
    labels = np.array([0] * 50 + [1] * 30 + [2] * 21)
    folds = stratified_fold_ids(labels, 10, seed=3)
    assert np.array_equal(folds, stratified_fold_ids(labels, 10, seed=3))
    assert not np.array_equal(folds, stratified_fold_ids(labels, 10, seed=4))
    sizes = np.bincount(folds, minlength=10)
    assert sizes.max() - sizes.min() <= 1
    for cls, count in ((0, 50), (1, 30), (2, 21)):
        per_fold = np.bincount(folds[labels == cls], minlength=10)
        assert per_fold.max() - per_fold.min() <= 1 and per_fold.sum() == count


def test_cv_fold_partitions_the_graphs() -> None:
    labels = np.arange(100) % 2
    for k in range(10):
        split = stratified_cv_fold(labels, k, 10, seed=0)
        all_idx = np.concatenate([split[s].numpy() for s in ("train", "val", "test")])
        assert sorted(all_idx.tolist()) == list(range(100))
        assert [len(split[s]) for s in ("train", "val", "test")] == [80, 10, 10]
    tests = [set(stratified_cv_fold(labels, k, 10, 0)["test"].tolist()) for k in range(10)]
    assert set().union(*tests) == set(range(100))


def write_index(path: Path, folds: list[list[int]]) -> Path:
    path.write_text("".join(",".join(map(str, f)) + "\n" for f in folds))
    return path


def test_index_files_select_the_fold_and_are_checked(tmp_path: Path) -> None:
    paths = {
        "train": write_index(tmp_path / "t.index", [[0, 1, 2], [3, 4, 5]]),
        "val": write_index(tmp_path / "v.index", [[3], [0]]),
        "test": write_index(tmp_path / "s.index", [[4, 5], [1, 2]]),
    }
    fold = fold_from_index_files(paths, 1, 2, 6)
    assert fold["train"].tolist() == [3, 4, 5] and fold["val"].tolist() == [0] and fold["test"].tolist() == [1, 2]
    with pytest.raises(DataError, match="expected 3 folds"):
        fold_from_index_files(paths, 0, 3, 6)
    with pytest.raises(DataError, match="outside the 5 graphs"):
        fold_from_index_files(paths, 0, 2, 5)
    write_index(paths["val"], [[3], [3]])
    with pytest.raises(DataError, match="share 1 graphs"):
        fold_from_index_files(paths, 1, 2, 6)


def test_igb_split_is_one_labeled_to_four_unlabeled_with_the_labeled_halved() -> None:
    masks = random_split_masks(50, IGB_FRACTIONS, seed=3)
    counts = {split: int(mask.sum()) for split, mask in masks.items()}
    assert counts == {"train_mask": 5, "val_mask": 5, "test_mask": 40}  # labeled 10 : unlabeled 40 = 1 : 4
    stacked = torch.stack(list(masks.values())).int()
    assert stacked.sum(dim=0).tolist() == [1] * 50  # disjoint and covering every node
    again = random_split_masks(50, IGB_FRACTIONS, seed=3)
    assert all(torch.equal(masks[k], again[k]) for k in masks)
    other = random_split_masks(50, IGB_FRACTIONS, seed=4)
    assert not torch.equal(masks["train_mask"], other["train_mask"])
