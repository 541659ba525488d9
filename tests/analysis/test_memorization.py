"""The NCMemo memorization score, rate, node sets, per-node rows and summary metrics on hand-made probabilities and
labels."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from graphbench.analysis.memorization import (
    SETS,
    MemorizationSets,
    memorization_metrics,
    memorization_rate,
    memorization_scores,
    memorization_sets,
    model_seeds,
    node_rows,
    scored_probabilities,
    true_label_probability,
)
from graphbench.data.splits import stratified_split_masks
from graphbench.vocabulary.errors import ConfigError

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


def test_index_order_takes_the_training_and_control_nodes_in_node_order_as_the_studys_code() -> None:
    """SBM/main_syncora.py get_node_splits: torch.where(train_mask) (increasing index), the first int(0.5 n)
    shared, then the candidates, then the rest; the control is test_indices[:len(candidate)]."""
    labels = torch.arange(100) % 5
    sets = memorization_sets(labels, (0.6, 0.2, 0.2), (0.5, 0.25, 0.25), seed=3, order="index")
    train = stratified_split_masks(labels, (0.6, 0.2, 0.2), 3)["train_mask"].nonzero().view(-1)
    test = stratified_split_masks(labels, (0.6, 0.2, 0.2), 3)["test_mask"].nonzero().view(-1)
    assert sets.shared.tolist() == train[:30].tolist()
    assert sets.candidate.tolist() == train[30:45].tolist()
    assert sets.independent.tolist() == train[45:].tolist()
    assert sets.control.tolist() == test[:15].tolist()
    shuffled = memorization_sets(labels, (0.6, 0.2, 0.2), (0.5, 0.25, 0.25), seed=3)
    assert torch.equal(torch.cat([shuffled.shared, shuffled.candidate, shuffled.independent]).sort().values, train)
    assert not torch.equal(shuffled.candidate, sets.candidate)
    with pytest.raises(ConfigError, match=r"task\.subset_order='sorted' is not valid; valid: \['shuffled', 'index'\]"):
        memorization_sets(labels, (0.6, 0.2, 0.2), (0.5, 0.25, 0.25), seed=3, order="sorted")


def test_scoring_the_last_seed_uses_its_pair_of_models_only() -> None:
    f, g = scored_probabilities(PROBS_F, PROBS_G, "last")
    assert torch.equal(f, PROBS_F[1:]) and torch.equal(g, PROBS_G[1:])
    # the last seed's pair: 0.7-0.3, 0.6-0.5, 0.7-0.8
    assert memorization_scores(f, g, LABELS).tolist() == pytest.approx([0.4, 0.1, -0.1])
    assert scored_probabilities(PROBS_F, PROBS_G, "all") == (PROBS_F, PROBS_G)
    with pytest.raises(ConfigError, match=r"task\.scored_seeds='first' is not valid; valid: \['all', 'last'\]"):
        scored_probabilities(PROBS_F, PROBS_G, "first")


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


def six_node_case() -> tuple[MemorizationSets, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Six nodes on a path, one per role: f is sure of every label of S_S and S_C, g of S_S and S_I; both
    are uniform over the two classes elsewhere; node 5 is a test node neither set holds."""
    node = [torch.tensor([i]) for i in range(6)]
    sets = MemorizationSets(node[0], node[1], node[2], node[3], node[4], torch.tensor([3, 5]))
    labels = torch.tensor([0, 1, 0, 1, 0, 1])
    sure = torch.nn.functional.one_hot(labels, 2).float()
    probs_f, probs_g = torch.full((6, 2), 0.5), torch.full((6, 2), 0.5)
    probs_f[[0, 1]], probs_g[[0, 2]] = sure[[0, 1]], sure[[0, 2]]
    return sets, labels, probs_f.unsqueeze(0), probs_g.unsqueeze(0)


def test_rows_hold_every_node_of_every_set_with_its_score_degree_and_probabilities() -> None:
    sets, labels, probs_f, probs_g = six_node_case()
    edge_index = torch.tensor([[0, 1, 2, 3, 4], [1, 2, 3, 4, 5]])
    rows, lds_of = node_rows(torch.eye(6), edge_index, labels, sets, probs_f, probs_g, knn_k=1)
    assert [(r["node"], r["set"]) for r in rows] == [(0, "shared"), (1, "candidate"), (2, "independent"), (3, "control")]
    assert [r["mem"] for r in rows] == pytest.approx([0.0, 0.5, -0.5, 0.0])
    assert [r["degree"] for r in rows] == [1, 2, 2, 2] and [r["label"] for r in rows] == [0, 1, 0, 1]
    assert (rows[1]["p_f"], rows[1]["p_g"]) == (1.0, 0.5)
    assert set(lds_of) == set(SETS) and all(len(lds_of[name]) == 1 for name in SETS)


def test_metrics_summarise_rates_set_means_and_accuracies() -> None:
    sets, labels, probs_f, probs_g = six_node_case()
    lds_of = {name: torch.tensor([0.25]) for name in SETS}
    m = memorization_metrics(probs_f, probs_g, labels, sets, lds_of, tau=0.4)
    assert (m["memorization/rate"], m["memorization/rate_control"]) == (1.0, 0.0)
    assert (m["lds/candidate_memorized"], m["lds/candidate_not_memorized"]) == (0.25, None)
    assert m["memorization/mean_independent"] == pytest.approx(-0.5) and m["memorization/mean_shared"] == 0.0
    assert list(m)[:4] == [
        "memorization/rate",
        "memorization/rate_control",
        "lds/candidate_memorized",
        "lds/candidate_not_memorized",
    ]
    # both test nodes are of class 1, where f is uniform and the argmax of a tie is class 0
    assert (m["test/accuracy_f"], m["test/accuracy_f_std"]) == (0.0, 0.0)
    assert m["val/accuracy_g"] == 1.0


def test_metrics_score_the_last_seed_and_average_the_accuracies_over_every_seed() -> None:
    sets = MemorizationSets(
        torch.tensor([0]), torch.tensor([1]), torch.tensor([2]), torch.tensor([2]), torch.tensor([0]), torch.tensor([1, 2])
    )
    lds_of = {name: torch.tensor([0.0]) for name in SETS}
    m = memorization_metrics(PROBS_F, PROBS_G, LABELS, sets, lds_of, tau=0.05, scored_seeds="last")
    assert m["memorization/mean_candidate"] == pytest.approx(0.1) and m["memorization/rate"] == 1.0
    assert m["memorization/mean_shared"] == pytest.approx(0.4)
    # test nodes 1, 2 (label 1): f's seeds predict [1, 0] and [1, 1], accuracies 0.5 and 1.0
    assert (m["test/accuracy_f"], m["test/accuracy_f_std"]) == (0.75, 0.25)
    averaged = memorization_metrics(PROBS_F, PROBS_G, LABELS, sets, lds_of, tau=0.05)
    assert averaged["memorization/mean_candidate"] == pytest.approx(0.2)


def test_f_and_g_share_their_seed_or_g_takes_its_own() -> None:
    assert model_seeds(7, "shared") == {"f": 7, "g": 7}
    assert model_seeds(7, "independent") == {"f": 7, "g": 1_000_007}
    with pytest.raises(ConfigError, match=r"^task.init='both' is not valid; valid: \['shared', 'independent'\]$"):
        model_seeds(7, "both")
