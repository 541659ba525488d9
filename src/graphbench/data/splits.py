"""Split helpers shared by sources and DataModules: cross-validation folds (the fixed
Benchmarking-GNNs index files, or a seeded stratified k-fold), split index arrays read from raw
files, and random node splits."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch_geometric.utils import index_to_mask

from graphbench.vocabulary.errors import ArgumentError, ConfigError, DataError
from graphbench.vocabulary.splits import SPLITS


def check_split_index(split_index: object, num_folds: int, dataset: str) -> int:
    """``split_index`` must name one of the ``num_folds`` folds."""
    if isinstance(split_index, bool) or not isinstance(split_index, int) or not 0 <= split_index < num_folds:
        raise ArgumentError(
            f"split_index={split_index!r} is not a fold of {dataset}: "
            f"valid values are 0..{num_folds - 1} ({num_folds}-fold cross-validation)"
        )
    return split_index


def read_index_folds(path: Path) -> list[np.ndarray]:
    """A Benchmarking-GNNs ``.index`` file: one fold per line, comma-separated graph indices."""
    folds = []
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            folds.append(np.array([int(v) for v in line.split(",") if v.strip()], dtype=np.int64))
        except ValueError as exc:
            raise DataError(f"{path}, line {number}: not a comma-separated list of integers ({exc})") from None
    return folds


def fold_from_index_files(paths: Mapping[str, Path], split_index: int, num_folds: int, num_graphs: int) -> dict[str, Tensor]:
    """The train/val/test indices of fold ``split_index`` from ``{split: path}`` index files,
    checked: ``num_folds`` lines per file, indices in range, the three splits disjoint."""
    fold: dict[str, Tensor] = {}
    for split in SPLITS:
        folds = read_index_folds(paths[split])
        if len(folds) != num_folds:
            raise DataError(f"{paths[split]}: expected {num_folds} folds (lines), found {len(folds)}")
        idx = folds[split_index]
        if idx.size and (idx.min() < 0 or idx.max() >= num_graphs):
            raise DataError(f"{paths[split]}: fold {split_index} indexes outside the {num_graphs} graphs")
        fold[split] = torch.from_numpy(idx)
    for a, b in (("train", "val"), ("train", "test"), ("val", "test")):
        common = np.intersect1d(fold[a].numpy(), fold[b].numpy())
        if common.size:
            raise DataError(f"fold {split_index}: splits '{a}' and '{b}' share {common.size} graphs (e.g. {common[:5].tolist()})")
    return fold


def stratified_fold_ids(labels: np.ndarray, num_folds: int, seed: int) -> np.ndarray:
    """Assign every graph to one of ``num_folds`` folds so that each fold holds (within one graph)
    the same share of every class. Deterministic given ``seed``: each class's graphs are permuted
    with ``numpy.random.default_rng(seed)`` and dealt out round-robin, continuing where the previous
    class stopped, so fold sizes differ by at most one."""
    labels = np.asarray(labels)
    rng = np.random.default_rng(seed)
    fold_of = np.empty(len(labels), dtype=np.int64)
    offset = 0
    for cls in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == cls))
        fold_of[members] = (offset + np.arange(len(members))) % num_folds
        offset += len(members)
    return fold_of


def stratified_cv_fold(labels: np.ndarray, split_index: int, num_folds: int, seed: int) -> dict[str, Tensor]:
    """Fold ``split_index`` of a stratified k-fold: test = that fold, val = the next fold, train = the
    rest (80/10/10 for 10 folds, the proportions of the Benchmarking-GNNs TU splits)."""
    fold_of = stratified_fold_ids(labels, num_folds, seed)
    val_fold = (split_index + 1) % num_folds
    test = np.flatnonzero(fold_of == split_index)
    val = np.flatnonzero(fold_of == val_fold)
    train = np.flatnonzero((fold_of != split_index) & (fold_of != val_fold))
    return {"train": torch.from_numpy(train), "val": torch.from_numpy(val), "test": torch.from_numpy(test)}


def as_index_array(value: Any, name: str) -> np.ndarray:
    """A split read from a raw file as an int64 index array; anything else is a :class:`DataError`."""
    array = np.asarray(value)
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise DataError(f"split '{name}' must be a 1-D integer array, got shape {array.shape} dtype {array.dtype}")
    return array.astype(np.int64)


#: IGB's node split (Li et al., IJCAI 2022): labeled : unlabeled = 1 : 4, and the labeled nodes split
#: 1 : 1 into train (fitting) and validation (model selection); the unlabeled nodes are the test set
IGB_FRACTIONS: tuple[float, float, float] = (0.1, 0.1, 0.8)


def random_split_masks(num_nodes: int, fractions: tuple[float, float, float], seed: int) -> dict[str, Tensor]:
    """Boolean ``{split}_mask`` vectors of a uniformly random split of the nodes into the given
    train/val/test fractions (the test split takes the remainder). Deterministic given ``seed``."""
    if len(fractions) != 3 or any(f < 0 for f in fractions) or sum(fractions) > 1 + 1e-9:
        raise ArgumentError(f"fractions={list(fractions)} must be three non-negative numbers summing to <= 1")
    perm = torch.randperm(num_nodes, generator=torch.Generator().manual_seed(int(seed)))
    n_train, n_val = round(fractions[0] * num_nodes), round(fractions[1] * num_nodes)
    parts = {"train": perm[:n_train], "val": perm[n_train : n_train + n_val], "test": perm[n_train + n_val :]}
    return {f"{split}_mask": index_to_mask(index, size=num_nodes) for split, index in parts.items()}


def stratified_split_masks(labels: Tensor, fractions: tuple[float, float, float], seed: int) -> dict[str, Tensor]:
    """Boolean ``{split}_mask`` vectors of a per-class random split: the nodes of each class are
    shuffled and the first ``int(fractions[0] * n_c)`` go to train, the next ``int(fractions[1] * n_c)``
    to val and the rest to test. This is the 60/20/20 split of the NCMemo code (Jamadandi et al.,
    ``SBM/dataset.py``: ``numpy.random.RandomState(seed)``, classes in increasing order), so it is
    deterministic given ``seed`` and reproduces that code's split for the same seed."""
    if len(fractions) != 3 or any(f < 0 for f in fractions) or sum(fractions) > 1 + 1e-9:
        raise ConfigError(f"split fractions must be three non-negative numbers summing to <= 1, got {list(fractions)}")
    y = labels.cpu().numpy()
    rng = np.random.RandomState(int(seed))
    parts: dict[str, list[np.ndarray]] = {split: [] for split in SPLITS}
    for cls in range(int(y.max()) + 1 if y.size else 0):
        members = np.flatnonzero(y == cls)
        rng.shuffle(members)
        n_train, n_val = int(fractions[0] * len(members)), int(fractions[1] * len(members))
        parts["train"].append(members[:n_train])
        parts["val"].append(members[n_train : n_train + n_val])
        parts["test"].append(members[n_train + n_val :])
    num_nodes = len(y)
    return {
        f"{split}_mask": index_to_mask(torch.from_numpy(np.concatenate(chunks or [np.empty(0, np.int64)])).long(), size=num_nodes)
        for split, chunks in parts.items()
    }
