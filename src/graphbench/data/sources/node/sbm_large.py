r"""``sbm-large``: stochastic-block-model node classification at tens of millions of nodes, in O(E).

PyG's ``stochastic_blockmodel_graph`` draws a Bernoulli variable for every pair of nodes
(:math:`O(N^2)` time and memory), so it cannot reach the graphs that need mini-batch training. This
generator samples the edges themselves, a planted-partition SBM parametrized by its edge homophily:

1. Node :math:`v` gets class :math:`y_v`, the classes balanced (sizes differ by at most one) and
   assigned by a random permutation.
2. :math:`M = \mathrm{round}(N \bar d / 2)` undirected edges are drawn independently: a source
   :math:`u` uniformly among all nodes; with probability :math:`h` a target uniformly among the nodes
   of :math:`u`'s class, otherwise among the nodes of a uniformly drawn other class (a lookup in the
   class-sorted node array: no per-node work). Self-loops are dropped and duplicate pairs merged;
   missing edges are drawn again until :math:`M` distinct pairs exist, and a surplus is removed
   uniformly at random. Every edge is then stored in both directions (average degree :math:`\bar d`).
   The expected edge homophily :math:`|\{(u,v) \in E: y_u = y_v\}| / |E|` is :math:`h`, up to the
   self-loops and duplicates removed (a fraction of order :math:`C/N` and :math:`\bar d C / N`).
3. Features :math:`x_v = \mu_{y_v} + \sigma \varepsilon_v` with class centroids
   :math:`\mu_c \sim \mathcal N(0, I_D)` and noise :math:`\varepsilon_v \sim \mathcal N(0, I_D)`.

Time and memory are :math:`O(N D + M \log M)` (the sort of the deduplication); the largest
objects are the edge list and the feature matrix. Everything is drawn from one ``torch.Generator``
seeded with ``generation_seed``, so the graph is a function of the parameters. No split ships with it: the
DataModule draws a random ``split_fractions`` split with ``split_seed`` (the fixed split is ``random``).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.utils import to_undirected

from graphbench.data.info import DataFacts, FeatureSpec
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.base import OneGraphNodeSource
from graphbench.data.sources.node.syn_homophily import edge_homophily
from graphbench.data.store.graph_store import GraphStore
from graphbench.vocabulary.errors import ArgumentError, DataError

#: draws beyond which a generator that still lacks distinct pairs gives up (the graph is too dense)
MAX_ROUNDS = 30
#: rows of the feature matrix written at a time (bounds the temporary memory of the centroid lookup)
_FEATURE_CHUNK = 1 << 20


def balanced_classes(num_nodes: int, num_classes: int, generator: torch.Generator) -> Tensor:
    """Class of every node: ``arange(N) % C`` placed by a random permutation."""
    y = torch.empty(num_nodes, dtype=torch.long)
    y[torch.randperm(num_nodes, generator=generator)] = torch.arange(num_nodes) % num_classes
    return y


def sample_sbm_edges(y: Tensor, num_classes: int, num_edges: int, homophily: float, generator: torch.Generator) -> Tensor:
    r"""``num_edges`` distinct undirected pairs ``[2, M]`` (``u < v``, sorted), drawn as the module
    docstring describes (step 2)."""
    n = y.numel()
    counts = torch.bincount(y, minlength=num_classes)
    starts = torch.cumsum(counts, 0) - counts
    by_class = torch.argsort(y, stable=True)
    keys = torch.empty(0, dtype=torch.long)
    for _ in range(MAX_ROUNDS):
        need = num_edges - keys.numel()
        if need <= 0:
            break
        draw = need + need // 50 + 16
        src = torch.randint(n, (draw,), generator=generator)
        same = torch.rand(draw, generator=generator) < homophily
        other = (y[src] + torch.randint(1, num_classes, (draw,), generator=generator)) % num_classes
        cls = torch.where(same, y[src], other)
        pick = (torch.rand(draw, generator=generator, dtype=torch.float64) * counts[cls]).long()
        dst = by_class[starts[cls] + torch.minimum(pick, counts[cls] - 1)]
        keep = src != dst
        src, dst = src[keep], dst[keep]
        pair_keys = torch.minimum(src, dst) * n + torch.maximum(src, dst)
        keys = torch.unique(torch.cat([keys, pair_keys]))
    else:
        if keys.numel() < num_edges:
            raise DataError(f"sbm-large: could not draw {num_edges} distinct edges in {MAX_ROUNDS} rounds; lower avg_degree")
    if keys.numel() > num_edges:
        keys = keys[torch.randperm(keys.numel(), generator=generator)[:num_edges]].sort().values
    return torch.stack([keys // n, keys % n])


def class_features(y: Tensor, num_classes: int, dim: int, noise: float, generator: torch.Generator) -> Tensor:
    r"""``x_v = mu_{y_v} + noise * eps_v`` with ``mu_c, eps_v ~ N(0, I_dim)``."""
    centroids = torch.randn(num_classes, dim, generator=generator)
    x = torch.randn(y.numel(), dim, generator=generator).mul_(noise)
    for start in range(0, y.numel(), _FEATURE_CHUNK):
        x[start : start + _FEATURE_CHUNK] += centroids[y[start : start + _FEATURE_CHUNK]]
    return x


class SBMLarge(OneGraphNodeSource):
    r"""A planted-partition SBM graph of ``num_nodes`` nodes in ``num_classes`` balanced classes, average
    degree ``avg_degree``, edge homophily ``homophily`` and Gaussian class features of width
    ``feature_dim`` and noise ``feature_noise`` (module docstring). Deterministic given ``generation_seed`` and
    the parameters; the realised homophily is stored in ``graph.realised_homophily``."""

    fixed_split = "random"

    def __init__(
        self,
        *,
        num_nodes: int = 100_000,
        num_classes: int = 10,
        avg_degree: float = 10.0,
        homophily: float = 0.8,
        feature_dim: int = 32,
        feature_noise: float = 4.0,
        generation_seed: int = 0,
    ) -> None:
        def number(value: Any) -> bool:
            return isinstance(value, (int, float)) and not isinstance(value, bool)

        if not isinstance(num_classes, int) or isinstance(num_classes, bool) or num_classes < 2:
            raise ArgumentError(f"num_classes={num_classes!r} must be an integer >= 2")
        if not isinstance(num_nodes, int) or isinstance(num_nodes, bool) or num_nodes < 2 * num_classes:
            raise ArgumentError(f"num_nodes={num_nodes!r} must be an integer >= 2 * num_classes ({2 * num_classes})")
        if not number(homophily) or not 0.0 <= homophily <= 1.0:
            raise ArgumentError(f"homophily={homophily!r} must be a number in [0, 1]")
        if not number(avg_degree) or avg_degree <= 0:
            raise ArgumentError(f"avg_degree={avg_degree!r} must be a positive number")
        if not isinstance(feature_dim, int) or isinstance(feature_dim, bool) or feature_dim < 1:
            raise ArgumentError(f"feature_dim={feature_dim!r} must be a positive integer")
        if not number(feature_noise) or feature_noise < 0:
            raise ArgumentError(f"feature_noise={feature_noise!r} must be a number >= 0")
        self.num_nodes, self.num_classes = num_nodes, num_classes
        self.avg_degree, self.homophily = float(avg_degree), float(homophily)
        self.feature_dim, self.feature_noise, self.generation_seed = feature_dim, float(feature_noise), int(generation_seed)
        self.num_edges = round(num_nodes * self.avg_degree / 2)
        # rejection-free sampling needs the pairs it draws to be a small part of those that exist
        smallest = num_nodes // num_classes
        intra_pairs = num_classes * smallest * (smallest - 1) / 2
        inter_pairs = num_nodes * (num_nodes - smallest) / 2
        if self.homophily * self.num_edges > intra_pairs / 2 or (1 - self.homophily) * self.num_edges > inter_pairs / 2:
            raise ArgumentError(
                f"avg_degree={avg_degree} is too dense for {num_nodes} nodes in {num_classes} classes at "
                f"homophily {homophily}: at most half of the possible (intra- and inter-class) pairs may be edges"
            )

    def cache_params(self) -> tuple[Any, ...]:
        return (
            self.num_nodes,
            self.num_classes,
            self.avg_degree,
            self.homophily,
            self.feature_dim,
            self.feature_noise,
            self.generation_seed,
        )

    def facts(self, store: GraphStore | None = None) -> DataFacts:
        return DataFacts(
            num_outputs=self.num_classes, node_features=FeatureSpec("dense", dim=self.feature_dim), edge_features=None
        )

    def generate(self) -> Data:
        """The graph (``x``, ``edge_index`` in both directions and sorted, ``y``), without split masks."""
        generator = torch.Generator().manual_seed(self.generation_seed)
        y = balanced_classes(self.num_nodes, self.num_classes, generator)
        pairs = sample_sbm_edges(y, self.num_classes, self.num_edges, self.homophily, generator)
        edge_index = to_undirected(pairs, num_nodes=self.num_nodes)
        x = class_features(y, self.num_classes, self.feature_dim, self.feature_noise, generator)
        return Data(x=x, edge_index=edge_index, y=y)

    def read_graph(self, raw: RawRoot) -> Data:
        graph = self.generate()
        graph.realised_homophily = torch.tensor([edge_homophily(graph.edge_index, graph.y)])
        empty = torch.zeros(self.num_nodes, dtype=torch.bool)  # the split is drawn at setup (split: random)
        graph.train_mask, graph.val_mask, graph.test_mask = empty, empty, empty
        return graph
