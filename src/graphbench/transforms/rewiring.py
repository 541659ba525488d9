"""Feature-similarity graph rewiring, the mitigation of memorization studied by NCMemo (Jamadandi et
al., "Memorization in Graph Neural Networks"): connect the node pairs whose features are most alike
and cut the edges whose endpoints are least alike, which raises homophily when similar features mean
similar labels.

Selected with ``+transform=rewire_feature_similarity`` (``conf/transform/``); the DataModule applies
it once, before any positional encoding, and caches the rewired data like a PE
(:func:`graphbench.build.data.build_datamodule`).
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.transforms import BaseTransform
from torch_geometric.utils import coalesce

from graphbench.vocabulary.errors import ConfigError, DataError

MODES: tuple[str, ...] = ("add", "delete", "both")
#: the most similarity entries scored at once when searching the non-edges (rows are chunked)
MAX_BLOCK_ELEMENTS: int = 1 << 22


def cosine_similarity_matrix_rows(x: Tensor, rows: slice) -> Tensor:
    """Cosine similarities :math:`\\cos(x_i, x_j)` of the nodes ``i`` in ``rows`` with every node ``j``
    (a zero feature vector has similarity 0 with everything)."""
    unit = torch.nn.functional.normalize(x.float(), dim=1)
    return unit[rows] @ unit.t()


class RewireFeatureSimilarity(BaseTransform):
    r"""Adds the ``budget`` non-edges with the highest cosine feature similarity (``mode=add``),
    deletes the ``budget`` edges with the lowest (``mode=delete``), or both, each chosen on the input
    graph (``mode=both``).

    Node pairs are unordered: an added pair gets both directions, a deleted pair loses both; every
    other edge is kept as it is (a directed graph stays directed elsewhere) and self-loops are never
    added or deleted. Ties are broken towards the pair :math:`(u, v)`, :math:`u < v`, that comes first
    in lexicographic order, so the result is deterministic. When fewer than ``budget`` candidates exist,
    all are taken. Graphs with edge features or weights are refused (new edges would have none).

    Args:
        budget (int): :math:`B`, the number of node pairs added and/or deleted (``>= 0``).
        mode (str): ``add``, ``delete`` or ``both``.
    """

    def __init__(self, budget: int, mode: str = "both") -> None:
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
            raise ConfigError(f"transform.budget must be a non-negative integer, got {budget!r}")
        if mode not in MODES:
            raise ConfigError(f"transform.mode={mode!r} is not valid; valid: {list(MODES)}")
        self.budget = budget
        self.mode = mode

    def forward(self, data: Data) -> Data:
        for key in ("edge_attr", "edge_weight"):
            if data.get(key) is not None:
                raise DataError(f"RewireFeatureSimilarity cannot rewire a graph with {key}: the new edges would have none")
        if data.x is None or not data.x.is_floating_point():
            raise DataError("RewireFeatureSimilarity needs dense floating-point node features x")
        n = int(data.num_nodes)
        edge_index = data.edge_index
        pairs = _unordered_pairs(edge_index, n)
        delete = self._lowest_edges(data.x, pairs) if self.mode in ("delete", "both") else pairs.new_empty(2, 0)
        add = self._highest_non_edges(data.x, pairs, n) if self.mode in ("add", "both") else pairs.new_empty(2, 0)
        if delete.size(1):
            key = torch.minimum(edge_index[0], edge_index[1]) * n + torch.maximum(edge_index[0], edge_index[1])
            gone = torch.isin(key, delete[0] * n + delete[1]) & (edge_index[0] != edge_index[1])
            edge_index = edge_index[:, ~gone]
        if add.size(1):
            edge_index = torch.cat([edge_index, add, add.flip(0)], dim=1)
        data = data.clone()
        data.edge_index = coalesce(edge_index, num_nodes=n)
        return data

    def _lowest_edges(self, x: Tensor, pairs: Tensor) -> Tensor:
        """The ``budget`` pairs of ``pairs`` with the lowest cosine similarity."""
        unit = torch.nn.functional.normalize(x.float(), dim=1)
        similarity = (unit[pairs[0]] * unit[pairs[1]]).sum(dim=1)
        order = torch.sort(similarity, stable=True).indices[: self.budget]
        return pairs[:, order.sort().values]

    def _highest_non_edges(self, x: Tensor, pairs: Tensor, n: int) -> Tensor:
        """The ``budget`` pairs ``u < v`` that are not in ``pairs`` with the highest cosine
        similarity, scanned in row blocks so that memory stays bounded."""
        if self.budget == 0 or n < 2:
            return pairs.new_empty(2, 0)
        existing = pairs[0] * n + pairs[1]
        rows_per_block = max(1, MAX_BLOCK_ELEMENTS // n)
        best_values, best_keys = torch.empty(0), torch.empty(0, dtype=torch.long)
        columns = torch.arange(n)
        for start in range(0, n, rows_per_block):
            stop = min(n, start + rows_per_block)
            similarity = cosine_similarity_matrix_rows(x, slice(start, stop))
            keys = torch.arange(start, stop).unsqueeze(1) * n + columns.unsqueeze(0)
            candidate = columns.unsqueeze(0) > torch.arange(start, stop).unsqueeze(1)  # u < v, no self-pairs
            candidate &= ~torch.isin(keys, existing)
            values, keys = similarity[candidate], keys[candidate]  # row-major: increasing pair order
            top = torch.sort(values, descending=True, stable=True).indices[: self.budget]
            best_values = torch.cat([best_values, values[top.sort().values]])
            best_keys = torch.cat([best_keys, keys[top.sort().values]])
        # blocks are concatenated in increasing pair order, so a stable sort breaks ties by pair
        chosen = torch.sort(best_values, descending=True, stable=True).indices[: self.budget]
        keys = best_keys[chosen.sort().values]
        return torch.stack([keys // n, keys % n])

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(budget={self.budget}, mode={self.mode!r})"


def _unordered_pairs(edge_index: Tensor, n: int) -> Tensor:
    """The distinct unordered pairs ``[2, P]`` (``u < v``) joined by an edge in either direction,
    self-loops left out, in increasing lexicographic order."""
    u = torch.minimum(edge_index[0], edge_index[1])
    v = torch.maximum(edge_index[0], edge_index[1])
    keep = u != v
    keys = torch.unique(u[keep] * n + v[keep])
    return torch.stack([keys // n, keys % n])
