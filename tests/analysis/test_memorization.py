"""The NCMemo memorization score, rate and node sets on hand-made probabilities and labels."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from graphbench.analysis.memorization import (
    memorization_rate,
    memorization_scores,
    memorization_sets,
    true_label_probability,
)
from graphbench.data.splits import stratified_split_masks
from graphbench.run.errors import ConfigError

LABELS = torch.tensor([0, 1, 1])
# two seeds of f and of g, three nodes, two classes
PROBS_F = torch.tensor([[[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]], [[0.7, 0.3], [0.4, 0.6], [0.3, 0.7]]], dtype=torch.float64)
PROBS_G = torch.tensor([[[0.1, 0.9], [0.5, 0.5], [0.6, 0.4]], [[0.3, 0.7], [0.5, 0.5], [0.2, 0.8]]], dtype=torch.float64)


def test_true_label_probability_picks_each_nodes_label() -> None:
    assert true_label_probability(PROBS_F[0], LABELS).tolist() == [0.9, 0.8, 0.5]
    assert true_label_probability(PROBS_F, LABELS).tolist() == [[0.9, 0.8, 0.5], [0.7, 0.6, 0.7]]


def test_mem_score_is_the_difference_of_seed_mean_true_label_probabilities() -> None:
    # E_f: (0.9+0.7)/2, (0.8+0.6)/2, (0.5+0.7)/2 = 0.8, 0.7, 0.6; E_g: 0.2, 0.5, 0.6
    mem = memorization_scores(PROBS_F, PROBS_G, LABELS)
    assert mem.tolist() == pytest.approx([0.6, 0.2, 0.0])
    # one model each: p_f - p_g of that pair
    assert memorization_scores(PROBS_F[0], PROBS_G[0], LABELS).tolist() == pytest.approx([0.8, 0.3, 0.1])


def test_rate_counts_scores_strictly_above_tau() -> None:
    mem = memorization_scores(PROBS_F, PROBS_G, LABELS)
    assert memorization_rate(mem, 0.5) == pytest.approx(1 / 3)
    assert memorization_rate(mem, 0.1) == pytest.approx(2 / 3)
    assert memorization_rate(torch.tensor([0.5, 0.6, 0.7]), 0.6) == pytest.approx(1 / 3)  # 0.6 is not > 0.6
    assert memorization_rate(torch.tensor([-0.2, 0.0]), -0.5) == 1.0
    assert np.isnan(memorization_rate(torch.tensor([]), 0.5))


def test_sets_follow_the_protocol_sizes_and_are_disjoint() -> None:
    labels = torch.arange(100) % 5  # 20 nodes per class -> 12/4/4 per class
    sets = memorization_sets(labels, (0.6, 0.2, 0.2), (0.5, 0.25, 0.25), seed=3)
    assert (len(sets.shared), len(sets.candidate), len(sets.independent)) == (30, 15, 15)
    assert (len(sets.val), len(sets.test), len(sets.control)) == (20, 20, 15)
    train = torch.cat([sets.shared, sets.candidate, sets.independent])
    everything = torch.cat([train, sets.val, sets.test])
    assert sorted(everything.tolist()) == list(range(100))  # a partition of the nodes
    assert set(sets.control.tolist()) <= set(sets.test.tolist())
    assert torch.bincount(labels[train]).tolist() == [12] * 5  # stratified: 60% of each class
    again = memorization_sets(labels, (0.6, 0.2, 0.2), (0.5, 0.25, 0.25), seed=3)
    assert torch.equal(again.candidate, sets.candidate) and torch.equal(again.control, sets.control)
    other = memorization_sets(labels, (0.6, 0.2, 0.2), (0.5, 0.25, 0.25), seed=4)
    assert not torch.equal(other.candidate, sets.candidate)


def test_bad_fractions_are_one_clear_error() -> None:
    labels = torch.arange(100) % 5
    with pytest.raises(ConfigError, match=r"task\.subset_fractions must be three positive fractions summing to 1"):
        memorization_sets(labels, (0.6, 0.2, 0.2), (0.5, 0.5, 0.25), seed=0)
    with pytest.raises(ConfigError, match="control needs 15 test nodes"):
        memorization_sets(labels, (0.6, 0.35, 0.05), (0.5, 0.25, 0.25), seed=0)


def test_stratified_split_reproduces_the_ncmemo_code() -> None:
    """The split of the study's SBM/dataset.py (RandomState(seed), per class in increasing order)."""
    labels = np.array([2, 0, 1, 1, 0, 2, 2, 0, 1, 0, 1, 2, 0, 0, 1, 2, 1, 0, 2, 1])
    rng = np.random.RandomState(15)
    expected: dict[str, list[int]] = {"train": [], "val": [], "test": []}
    for c in range(3):
        idx = np.arange(len(labels))[labels == c]
        rng.shuffle(idx)
        n_train, n_val = int(0.6 * len(idx)), int(0.2 * len(idx))
        expected["train"] += idx[:n_train].tolist()
        expected["val"] += idx[n_train : n_train + n_val].tolist()
        expected["test"] += idx[n_train + n_val :].tolist()
    masks = stratified_split_masks(torch.from_numpy(labels), (0.6, 0.2, 0.2), 15)
    for split in expected:
        assert masks[f"{split}_mask"].nonzero().view(-1).tolist() == sorted(expected[split])


def test_an_image_that_cannot_be_logged_never_ends_the_run(tmp_path, caplog: pytest.LogCaptureFixture) -> None:
    from graphbench.analysis.memorization import log_image
    from graphbench.run.loggers import SafeWandbLogger

    class Broken(SafeWandbLogger):
        def __init__(self) -> None:  # no W&B run: only log_image is exercised
            pass

        def log_image(self, *args: object, **kwargs: object) -> None:
            raise RuntimeError("network down")

    log_image([Broken(), object()], "memorization/histogram", tmp_path / "h.png")
    assert "could not log h.png to W&B (RuntimeError: network down)" in caplog.text
