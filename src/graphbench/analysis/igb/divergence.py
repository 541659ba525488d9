r"""The label statistics IGB's subgraph sampler compares (Li et al., IJCAI 2022, and the IGB code).

* node-label distribution :math:`p_c = |\{v : y_v = c\}| / |V|` over the ``C`` classes;
* class-pair edge distribution: for the unordered class pairs :math:`\{a, b\}`, :math:`a \le b`
  (``C (C + 1) / 2`` of them), the share of undirected edges joining a node of class :math:`a`
  and one of class :math:`b`, every count smoothed by :data:`EDGE_SMOOTHING` first;
* :math:`\mathrm{KL}(p \Vert q) = \sum_i p_i \log(p_i / q_i)` of the full graph's distribution
  :math:`p` against the subgraph's :math:`q` (node distributions smoothed by :data:`NODE_SMOOTHING`).
The smoothing constants are the IGB code's.
"""

from __future__ import annotations

import numpy as np

NODE_SMOOTHING: float = 1e-10
EDGE_SMOOTHING: float = 1e-5


def node_label_distribution(labels: np.ndarray, num_classes: int) -> np.ndarray:
    """Share of the nodes in each class, smoothed by :data:`NODE_SMOOTHING`."""
    counts = np.bincount(np.asarray(labels, dtype=np.int64), minlength=num_classes).astype(np.float64)
    return counts / max(counts.sum(), 1.0) + NODE_SMOOTHING


def edge_class_pair_distribution(labels: np.ndarray, edges: np.ndarray, num_classes: int) -> np.ndarray:
    """Share of the undirected ``edges`` (``[2, E]``, each edge once) per unordered class pair
    ``(a, b)``, ``a <= b``, in row-major upper-triangle order; counts smoothed by :data:`EDGE_SMOOTHING`."""
    labels = np.asarray(labels, dtype=np.int64)
    a, b = labels[edges[0]], labels[edges[1]]
    pair = np.minimum(a, b) * num_classes + np.maximum(a, b)
    counts = np.bincount(pair, minlength=num_classes * num_classes).reshape(num_classes, num_classes)
    upper = counts[np.triu_indices(num_classes)].astype(np.float64) + EDGE_SMOOTHING
    return upper / upper.sum()


def kl_divergence(p: np.ndarray, q: np.ndarray) -> float:
    r""":math:`\mathrm{KL}(p \Vert q) = \sum_i p_i \log(p_i / q_i)` of two distributions with positive entries."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    p, q = p / p.sum(), q / q.sum()
    return float(np.sum(p * np.log(p / q)))


def acceptance_probability(
    node_kl: float, edge_kl: float, median_node_kl: float, median_edge_kl: float, exponent: float
) -> float:
    r"""IGB's probability of accepting a sample:
    :math:`\min\big(\tilde k_{node} / k_{node},\ \tilde k_{edge} / k_{edge}\big)^{e}`, capped at 1, where
    :math:`\tilde k` is the median KL divergence of the samples accepted so far (infinite before
    any) and :math:`e` the ``exponent`` (the IGB code's ``accept_rate``, 5). A sample whose KL is 0
    matches the full graph exactly and is always accepted."""
    ratios = []
    for median, value in ((median_node_kl, node_kl), (median_edge_kl, edge_kl)):
        ratios.append(np.inf if value <= 0 else median / value)
    return float(min(1.0, min(ratios) ** exponent))
