"""IGB's label statistics and acceptance rule on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from graphbench.analysis.igb.divergence import (
    EDGE_SMOOTHING,
    NODE_SMOOTHING,
    acceptance_probability,
    edge_class_pair_distribution,
    kl_divergence,
    node_label_distribution,
)

LABELS = np.array([0, 0, 1, 2])
EDGES = np.array([[0, 0, 1, 2], [1, 2, 3, 3]])  # class pairs (0,0), (0,1), (0,2), (1,2)


def test_node_label_distribution() -> None:
    assert np.allclose(node_label_distribution(LABELS, 3), np.array([0.5, 0.25, 0.25]) + NODE_SMOOTHING)


def test_edge_class_pair_distribution_counts_unordered_pairs() -> None:
    # upper triangle order: (0,0) (0,1) (0,2) (1,1) (1,2) (2,2)
    counts = np.array([1, 1, 1, 0, 1, 0]) + EDGE_SMOOTHING
    assert np.allclose(edge_class_pair_distribution(LABELS, EDGES, 3), counts / counts.sum())
    # the direction of an edge does not matter
    assert np.allclose(edge_class_pair_distribution(LABELS, EDGES[::-1], 3), counts / counts.sum())


def test_kl_of_a_distribution_with_itself_is_zero_and_known_values_match() -> None:
    p = edge_class_pair_distribution(LABELS, EDGES, 3)
    assert kl_divergence(p, p) == 0.0
    assert kl_divergence([0.5, 0.5], [0.25, 0.75]) == pytest.approx(0.5 * math.log(2) + 0.5 * math.log(2 / 3))


def test_acceptance_probability() -> None:
    # before any accepted sample the medians are infinite: always accepted
    assert acceptance_probability(0.3, 0.4, math.inf, math.inf, 5.0) == 1.0
    # min of the two ratios, raised to the exponent
    assert acceptance_probability(0.2, 0.1, 0.1, 0.1, 2.0) == pytest.approx(0.25)
    assert acceptance_probability(0.1, 0.4, 0.1, 0.2, 3.0) == pytest.approx(0.125)
    # better than the median: capped at 1; a perfect match (KL 0): 1
    assert acceptance_probability(0.05, 0.05, 0.1, 0.1, 5.0) == 1.0
    assert acceptance_probability(0.0, 0.2, 0.1, 0.2, 5.0) == 1.0
