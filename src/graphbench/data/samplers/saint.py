r"""GraphSAINT (Zeng et al. 2020, "GraphSAINT: Graph Sampling Based Inductive Learning Method"):
every training step runs on the subgraph induced by a random node set :math:`V_s` (node, edge or
random-walk sampler), with the paper's two normalizations estimated by pre-sampling (Sec. 3.2,
Alg. 2). Over :math:`N` pre-sampled subgraphs, let :math:`C_v` count those containing node :math:`v`
and :math:`C_{u,v}` those containing edge :math:`u \to v`. Then

- **aggregator normalization** :math:`\alpha_{u,v} = C_{u,v} / C_v`: node :math:`v` aggregates
  :math:`\sum_{u \in N_s(v)} \tilde A_{v,u} x_u / \alpha_{u,v}`, whose expectation given
  :math:`v \in V_s` is the full-graph aggregation :math:`\sum_{u \in N(v)} \tilde A_{v,u} x_u`
  (Prop. 3.1). Batches carry :math:`1 / \alpha_{u,v}` as ``edge_weight``; layers that take edge
  weights (GCN, SAGE, GIN, ...) use it, the others ignore it (see :mod:`graphbench.data.samplers`).
- **loss normalization** :math:`\lambda_v = C_v / N`, the estimated probability that :math:`v` is
  sampled: batches carry ``loss_weight`` :math:`= 1 / (\lambda_v |V_\text{train}|)`, so that
  :math:`\sum_{v \in V_s \cap V_\text{train}} L_v / (\lambda_v |V_\text{train}|)` is an unbiased
  estimate of the full-batch loss, the mean of :math:`L_v` over the training nodes.

Counts of 0 (a node or edge no pre-sampled subgraph contained) are taken as 1. The graph is
transductive: subgraphs are sampled from the whole graph and the loss counts its training nodes (as
the OGB examples do for ogbn-products). Everything is vectorized per subgraph. Each subgraph is drawn
from its own seed (:class:`StepSeeds`), so the batches depend on the run's seed only, not on the
number of loader workers, and the ranks of a data-parallel run draw different subgraphs.
"""

from __future__ import annotations

import logging
import math
from abc import abstractmethod
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor
from torch.utils.data import DataLoader
from torch.utils.data import Sampler as IndexSampler
from torch_geometric.data import Data
from torch_geometric.loader.utils import filter_data
from torch_geometric.sampler.utils import to_csc

from graphbench.data.samplers.base import Sampler
from graphbench.data.samplers.context import SamplerContext, positive_int
from graphbench.data.samplers.neighbor_loader import segment_arange, segment_ids
from graphbench.data.store.sharding import Shard
from graphbench.vocabulary.errors import ConfigError

log = logging.getLogger(__name__)


@dataclass
class CSCGraph:
    """A graph in CSC form: ``row[colptr[v]:colptr[v + 1]]`` are the sources of the in-edges of
    ``v``, ``col`` their target, ``perm`` maps CSC positions to the original edge ids."""

    colptr: Tensor
    row: Tensor
    col: Tensor
    perm: Tensor | None

    @classmethod
    def of(cls, graph: Data) -> CSCGraph:
        colptr, row, perm = to_csc(graph, device="cpu")
        degree = colptr[1:] - colptr[:-1]
        col = segment_ids(degree)
        return cls(colptr, row, col, perm)

    @property
    def num_nodes(self) -> int:
        return self.colptr.numel() - 1

    @property
    def in_degree(self) -> Tensor:
        return self.colptr[1:] - self.colptr[:-1]


def induced_edges(csc: CSCGraph, nodes: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """The edges of the subgraph induced by the distinct, sorted ``nodes``: local ``(source, target)``
    indices into ``nodes`` and the edges' CSC positions. Memory and time are in the in-edges of
    ``nodes`` (a binary search in ``nodes``), not in the graph's size: no graph-sized id map per batch."""
    start = csc.colptr[nodes]
    degree = csc.colptr[nodes + 1] - start
    owner = segment_ids(degree)
    position = start[owner] + segment_arange(degree)
    global_source = csc.row[position]
    source = torch.searchsorted(nodes, global_source).clamp_(max=max(nodes.numel() - 1, 0))
    keep = nodes[source] == global_source
    return source[keep], owner[keep], position[keep]


def sample_from(cdf: Tensor, count: int, generator: torch.Generator | None) -> Tensor:
    """``count`` indices drawn with replacement from the distribution with cumulative ``cdf``."""
    draws = torch.rand(count, generator=generator, dtype=cdf.dtype, device=cdf.device) * cdf[-1]
    return torch.searchsorted(cdf, draws, right=True).clamp_(max=cdf.numel() - 1)


class GraphSAINT(Sampler):
    r"""A GraphSAINT sampler (the node sets are the subclasses'): ``num_steps`` subgraphs per epoch
    (``null``: as many as make the subgraphs' nodes add up to the graph's size), normalization
    estimated from ``presample_steps`` pre-sampled subgraphs (``null``: as many as sample every node
    ``presample_coverage`` times on average, Zeng et al.'s rule), drawn with ``presample_seed`` and
    cached per graph."""

    def __init__(
        self,
        *,
        budget: int,
        num_steps: int | None = None,
        presample_steps: int | None = None,
        presample_coverage: int = 50,
        presample_seed: int = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.budget = positive_int(budget, "budget")
        self.num_steps = None if num_steps is None else positive_int(num_steps, "num_steps")
        self.presample_steps = None if presample_steps is None else positive_int(presample_steps, "presample_steps")
        self.presample_coverage = positive_int(presample_coverage, "presample_coverage")
        self.presample_seed = int(presample_seed)

    @abstractmethod
    def sample_nodes(self, csc: CSCGraph, generator: torch.Generator | None = None) -> Tensor:
        """The distinct nodes of one subgraph, sorted."""

    def prepare(self, csc: CSCGraph) -> None:
        """Build what sampling from ``csc`` needs once per graph (a sampling distribution), so that no
        step builds graph-sized tensors; ``sample_nodes`` calls it when it has not been called."""

    def params(self) -> tuple[Any, ...]:
        return (self.name, self.budget)

    def presample(self, csc: CSCGraph) -> dict[str, Any]:
        r"""The counts :math:`C_v`, :math:`C_{u,v}` (by CSC position) over :math:`N` pre-sampled
        subgraphs, :math:`N` and the mean number of nodes of a subgraph."""
        generator = torch.Generator().manual_seed(self.presample_seed)
        node_count = torch.zeros(csc.num_nodes, dtype=torch.int32, device=csc.row.device)
        edge_count = torch.zeros(csc.row.numel(), dtype=torch.int32, device=csc.row.device)
        steps, total, target = 0, 0, self.presample_coverage * csc.num_nodes
        while (steps < self.presample_steps) if self.presample_steps is not None else (total < target):
            nodes = self.sample_nodes(csc, generator)
            node_count[nodes] += 1
            edge_count[induced_edges(csc, nodes)[2]] += 1
            steps, total = steps + 1, total + nodes.numel()
        return {"node_count": node_count, "edge_count": edge_count, "steps": steps, "mean_nodes": total / steps}

    def normalization(self, graph: Data, csc: CSCGraph, context: SamplerContext) -> dict[str, Any]:
        params = (*self.params(), self.presample_steps, self.presample_coverage, self.presample_seed)
        return context.cache("saint", params, lambda: self.presample(csc))

    def train_loader(self, graph: Data, context: SamplerContext) -> DataLoader:
        csc = CSCGraph.of(graph)
        norm = self.normalization(graph, csc, context)
        self.prepare(csc)
        num_train = int(graph.train_mask.sum())
        if num_train == 0:
            raise ConfigError(f"sampler={self.name}: the graph has no training node")
        node_count = norm["node_count"].clamp(min=1).double()
        loss_weight = (norm["steps"] / (node_count * num_train)).float()
        num_steps = self.num_steps or expected_steps(csc.num_nodes, norm["mean_nodes"])
        log.info(
            "sampler=%s: subgraphs of %s nodes on average (of %s; over %d pre-sampled), %d step%s an epoch",
            self.name,
            f"{norm['mean_nodes']:,.0f}",
            f"{csc.num_nodes:,}",
            norm["steps"],
            num_steps,
            "" if num_steps == 1 else "s",
        )
        return DataLoader(
            SeedAsItem(),
            batch_size=None,
            sampler=StepSeeds(num_steps, context.shard),
            collate_fn=SaintBatches(self, graph, csc, norm["node_count"], norm["edge_count"], loss_weight),
            num_workers=context.num_workers,
            persistent_workers=context.num_workers > 0,
        )


class StepSeeds(IndexSampler[int]):
    """One seed per subgraph: when an epoch starts, ``num_steps`` seeds are drawn from the global RNG
    (seeded by the run's seed), and in a data-parallel run of ``w`` processes rank ``r`` takes the seeds
    at positions ``r, r + w, ...`` of ``ceil(num_steps / w) * w`` drawn, so that every rank takes the
    same number of steps and no two draw the same subgraph."""

    def __init__(self, num_steps: int, shard: Shard | None = None) -> None:
        self.shard = shard if shard is not None else Shard(0, 1)
        self.per_rank = math.ceil(num_steps / self.shard.world_size)

    def __len__(self) -> int:
        return self.per_rank

    def __iter__(self):  # type: ignore[no-untyped-def]
        seeds = torch.randint(2**62, (self.per_rank * self.shard.world_size,))
        return iter(seeds[self.shard.rank :: self.shard.world_size].tolist())


class SeedAsItem(torch.utils.data.Dataset[int]):
    """The loader's dataset: the item of a seed is the seed (the collate function samples from it)."""

    def __getitem__(self, seed: int) -> int:
        return seed


class SaintBatches:
    """The loader's collate function: a seed (:class:`StepSeeds`) -> one sampled subgraph with
    ``edge_weight`` (:math:`1/\\alpha_{u,v}`), ``loss_weight`` and ``n_id`` (the nodes' ids in the graph)."""

    def __init__(
        self, sampler: GraphSAINT, graph: Data, csc: CSCGraph, node_count: Tensor, edge_count: Tensor, loss_weight: Tensor
    ) -> None:
        self.sampler, self.graph, self.csc = sampler, graph, csc
        self.node_count, self.edge_count, self.loss_weight = node_count, edge_count, loss_weight

    def __call__(self, seed: int) -> Data:
        nodes = self.sampler.sample_nodes(self.csc, torch.Generator().manual_seed(seed))
        source, target, position = induced_edges(self.csc, nodes)
        data = filter_data(self.graph, nodes, source, target, position, self.csc.perm)
        aggregator = self.node_count[nodes[target]].double() / self.edge_count[position].clamp(min=1).double()
        weight = aggregator.float()
        data.edge_weight = weight if data.get("edge_weight") is None else data.edge_weight * weight
        data.loss_weight = self.loss_weight[nodes]
        data.n_id = nodes
        return data


class SaintNode(GraphSAINT):
    r"""``sampler=saint_node``: ``budget`` nodes drawn with replacement with probability
    :math:`p_u \propto \|\tilde A_{:,u}\|^2 = \sum_{v: u \to v} 1 / \deg(v)^2` (Zeng et al., Sec. 3.3,
    :math:`\tilde A = D^{-1} A`)."""

    name = "saint_node"
    _cdf: Tensor | None = None

    def prepare(self, csc: CSCGraph) -> None:
        if self._cdf is None or self._cdf.numel() != csc.num_nodes:
            inverse_square = csc.in_degree.double().clamp(min=1).pow(-2)
            p = torch.zeros(csc.num_nodes, dtype=torch.float64, device=csc.row.device).index_add_(
                0, csc.row, inverse_square[csc.col]
            )
            self._cdf = torch.cumsum(p, 0)

    def sample_nodes(self, csc: CSCGraph, generator: torch.Generator | None = None) -> Tensor:
        self.prepare(csc)
        return torch.unique(sample_from(self._cdf, self.budget, generator))


class SaintEdge(GraphSAINT):
    r"""``sampler=saint_edge``: ``budget`` edges drawn with replacement with probability
    :math:`p_{u,v} \propto 1/\deg(u) + 1/\deg(v)` (Zeng et al., Sec. 3.3); the subgraph is induced by
    their endpoints."""

    name = "saint_edge"
    _cdf: Tensor | None = None

    def prepare(self, csc: CSCGraph) -> None:
        if self._cdf is None or self._cdf.numel() != csc.row.numel():
            inverse = csc.in_degree.double().clamp(min=1).reciprocal()
            self._cdf = torch.cumsum(inverse[csc.row] + inverse[csc.col], 0)

    def sample_nodes(self, csc: CSCGraph, generator: torch.Generator | None = None) -> Tensor:
        self.prepare(csc)
        if self._cdf.numel() == 0:
            raise ConfigError(f"sampler={self.name} needs a graph with edges")
        edges = sample_from(self._cdf, self.budget, generator)
        return torch.unique(torch.cat([csc.row[edges], csc.col[edges]]))


class SaintRandomWalk(GraphSAINT):
    r"""``sampler=saint_rw``: ``budget`` root nodes drawn uniformly, each starting a random walk of
    ``walk_length`` steps to uniformly random in-neighbours (a node without one stays); the subgraph is
    induced by every node visited (Zeng et al., Sec. 3.3)."""

    name = "saint_rw"

    def __init__(self, *, walk_length: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.walk_length = positive_int(walk_length, "walk_length")

    def params(self) -> tuple[Any, ...]:
        return (*super().params(), self.walk_length)

    def sample_nodes(self, csc: CSCGraph, generator: torch.Generator | None = None) -> Tensor:
        if csc.row.numel() == 0:
            raise ConfigError(f"sampler={self.name} needs a graph with edges")
        current = torch.randint(csc.num_nodes, (self.budget,), generator=generator, device=csc.row.device)
        visited = [current]
        for _ in range(self.walk_length):
            start = csc.colptr[current]
            d = csc.colptr[current + 1] - start  # not csc.in_degree: that is graph-sized
            offset = (torch.rand(current.numel(), generator=generator, dtype=torch.float64, device=d.device) * d).long()
            position = (start + offset).clamp(max=csc.row.numel() - 1)
            current = torch.where(d > 0, csc.row[position], current)
            visited.append(current)
        return torch.unique(torch.cat(visited))


def expected_steps(num_nodes: int, mean_nodes: float) -> int:
    """Subgraphs per epoch so that their nodes add up to about the graph's size."""
    return max(1, math.ceil(num_nodes / mean_nodes))
