"""Label disagreement score (NCMemo, Jamadandi et al., "Memorization in Graph Neural Networks").

.. math:: \\mathrm{LDS}_k(v) = \\frac{1}{k} \\sum_{u \\in N_k(v)} \\mathbb{1}[y_u \\neq y_v]

where :math:`N_k(v)` are the ``k`` nearest neighbours of :math:`v` in feature space (Euclidean
distance) among the reference nodes (the training nodes of model ``f``, :math:`S_S \\cup S_C`) other
than :math:`v` itself. A node whose feature-space neighbourhood carries other labels is, by the
study's finding, more likely to be memorized.
"""

from __future__ import annotations

import torch
from torch import Tensor

from graphbench.vocabulary.errors import ConfigError


def label_disagreement(x: Tensor, y: Tensor, nodes: Tensor, reference: Tensor, k: int = 3) -> Tensor:
    """:math:`\\mathrm{LDS}_k(v)` for every node index in ``nodes``, with neighbours drawn from the node
    indices in ``reference`` (``v`` itself excluded). Neighbours at equal distance are taken in
    increasing node index, so the score is deterministic. Returns a float tensor shaped like ``nodes``."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"the LDS neighbour count k must be a positive integer, got {k!r}")
    reference = torch.unique(reference.long())  # sorted: ties resolve to the lower node index
    nodes = nodes.long()
    available = len(reference) - int(bool(torch.isin(nodes, reference).any()))
    if available < k:
        raise ConfigError(f"LDS with k={k} needs at least {k} reference nodes besides each node; there are {available}")
    if len(nodes) == 0:
        return torch.empty(0, device=x.device)
    features = x.float()
    distances = torch.cdist(features[nodes], features[reference])
    distances[nodes.unsqueeze(1) == reference.unsqueeze(0)] = float("inf")
    order = torch.sort(distances, dim=1, stable=True).indices[:, :k]
    neighbour_labels = y[reference][order]
    return (neighbour_labels != y[nodes].unsqueeze(1)).float().mean(dim=1)
