r"""i.i.d. subgraphs of one labelled graph, the evaluation sets of IGB (Li et al., IJCAI 2022).

Random-walk subgraphs (:mod:`~graphbench.analysis.igb.walk`) are proposed one after another on one
chain that starts at a random node of the largest connected component. Each proposal is accepted
with the probability of :func:`~graphbench.analysis.igb.divergence.acceptance_probability`, from its
node-label and class-pair-edge KL divergences against the full graph and the medians of the
accepted ones; the first ``burn_in`` accepted subgraphs are discarded (their divergences still count
towards the medians), as the IGB code's burn-in rounds. Each kept subgraph is split 10 / 10 / 80
into train / validation / test nodes (:data:`graphbench.data.splits.IGB_FRACTIONS`).

Everything is drawn from one ``numpy.random.default_rng(seed)``: the same seed gives the same subgraphs.

This module sits under ``analysis/`` rather than ``data/``: it builds evaluation sets for an analysis
protocol (``task=iid_eval``), not batches for the training pipeline.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data

from graphbench.analysis.igb.divergence import (
    acceptance_probability,
    edge_class_pair_distribution,
    kl_divergence,
    node_label_distribution,
)
from graphbench.analysis.igb.walk import UndirectedGraph, random_walk
from graphbench.data.splits import IGB_FRACTIONS, random_split_masks
from graphbench.vocabulary.errors import ConfigError

log = logging.getLogger(__name__)

#: proposals per kept subgraph after which the sampler gives up (a graph the test can hardly satisfy)
MAX_PROPOSALS_PER_SUBGRAPH: int = 1000


@dataclass(frozen=True)
class SampledSubgraph:
    """One accepted subgraph: its nodes (sorted ids in the full graph), its traversed edges (ids into
    :attr:`UndirectedGraph.edges`), its two KL divergences and the seed of its node split."""

    nodes: np.ndarray
    edge_ids: np.ndarray
    node_kl: float
    edge_kl: float
    split_seed: int


@dataclass(frozen=True)
class SamplerStats:
    """How the chain went: proposals made, accepted (burn-in included) and kept."""

    proposed: int
    accepted: int
    kept: int


def sample_subgraphs(
    edge_index: Tensor,
    labels: Tensor,
    num_nodes: int,
    num_classes: int,
    *,
    num_subgraphs: int = 100,
    num_edges: int = 1000,
    burn_in: int = 5,
    accept_exponent: float = 5.0,
    seed: int = 0,
) -> tuple[list[SampledSubgraph], SamplerStats]:
    """``num_subgraphs`` accepted random-walk subgraphs of ``num_edges`` distinct edges each."""
    if num_subgraphs < 1:
        raise ConfigError(f"task.num_subgraphs must be >= 1, got {num_subgraphs}")
    if burn_in < 0:
        raise ConfigError(f"task.burn_in must be >= 0, got {burn_in}")
    graph = UndirectedGraph.from_edge_index(edge_index, num_nodes)
    component, component_edges = graph.largest_component()
    if not 1 <= num_edges <= component_edges:
        raise ConfigError(
            f"task.num_edges={num_edges} must lie in 1..{component_edges}, the number of edges of the graph's "
            "largest connected component (a walk never leaves its component)"
        )
    y = labels.cpu().numpy().astype(np.int64).reshape(-1)
    full_nodes = node_label_distribution(y, num_classes)
    full_edges = edge_class_pair_distribution(y, graph.edges, num_classes)
    rng = np.random.default_rng(seed)
    current = int(rng.choice(component))
    accepted_node_kl, accepted_edge_kl = [np.inf], [np.inf]  # the IGB code's starting lists
    kept: list[SampledSubgraph] = []
    proposed = accepted = 0
    limit = MAX_PROPOSALS_PER_SUBGRAPH * (num_subgraphs + burn_in)
    while len(kept) < num_subgraphs:
        if proposed >= limit:
            raise ConfigError(f"the KL acceptance test accepted {accepted} of {proposed} proposals; lower task.accept_exponent")
        nodes, edge_ids, current = random_walk(graph, current, num_edges, rng)
        proposed += 1
        node_kl = kl_divergence(full_nodes, node_label_distribution(y[nodes], num_classes))
        edge_kl = kl_divergence(full_edges, edge_class_pair_distribution(y, graph.edges[:, edge_ids], num_classes))
        probability = acceptance_probability(
            node_kl, edge_kl, float(np.median(accepted_node_kl)), float(np.median(accepted_edge_kl)), accept_exponent
        )
        if rng.random() >= probability:
            continue
        accepted += 1
        accepted_node_kl.append(node_kl)
        accepted_edge_kl.append(edge_kl)
        split_seed = int(rng.integers(2**31 - 1))
        if accepted > burn_in:
            kept.append(SampledSubgraph(nodes, edge_ids, node_kl, edge_kl, split_seed))
    log.info("sampled %d subgraphs: %d proposals, %d accepted (%d burn-in)", len(kept), proposed, accepted, burn_in)
    return kept, SamplerStats(proposed, accepted, len(kept))


def subgraph_data(graph: Data, undirected: UndirectedGraph, sample: SampledSubgraph) -> Data:
    """The subgraph as a PyG ``Data``: features and labels of its nodes, its traversed edges in both
    directions (relabelled to ``0..n-1``) and IGB's 10 / 10 / 80 ``{train,val,test}_mask``."""
    nodes = torch.from_numpy(sample.nodes)
    relabel = np.full(undirected.num_nodes, -1, dtype=np.int64)
    relabel[sample.nodes] = np.arange(len(sample.nodes))
    local = torch.from_numpy(relabel[undirected.edges[:, sample.edge_ids]])
    data = Data(x=graph.x[nodes], y=graph.y[nodes], edge_index=torch.cat([local, local.flip(0)], dim=1), num_nodes=len(nodes))
    for key, mask in random_split_masks(len(nodes), IGB_FRACTIONS, sample.split_seed).items():
        data[key] = mask
    return data


def overlap_and_coverage(node_sets: list[np.ndarray], num_nodes: int) -> tuple[float, float]:
    r"""Mean pairwise Jaccard index :math:`|S_i \cap S_j| / |S_i \cup S_j|` over the pairs
    :math:`i < j` of node sets (NaN for fewer than two), and coverage: the share of the
    ``num_nodes`` nodes in at least one set. Computed with one membership matrix product."""
    if not node_sets:
        return float("nan"), 0.0
    membership = np.zeros((len(node_sets), num_nodes), dtype=np.float32)
    for row, nodes in enumerate(node_sets):
        membership[row, nodes] = 1.0
    coverage = float((membership.sum(axis=0) > 0).sum() / num_nodes)
    if len(node_sets) < 2:
        return float("nan"), coverage
    intersection = membership @ membership.T
    sizes = np.diag(intersection)
    union = sizes[:, None] + sizes[None, :] - intersection
    upper = np.triu_indices(len(node_sets), k=1)
    return float(np.mean(intersection[upper] / union[upper])), coverage
