r"""Neighbor sampling (Hamilton et al. 2017, "Inductive Representation Learning on Large Graphs"),
vectorized in pure torch behind PyG's sampler interface.

PyG's :class:`~torch_geometric.sampler.NeighborSampler` only calls compiled kernels (pyg-lib or
torch-sparse); :class:`TorchNeighborSampler` keeps its CSC preparation and its place in
:class:`~torch_geometric.loader.NeighborLoader` / :class:`~torch_geometric.loader.LinkNeighborLoader`
(``neighbor_sampler=``) and replaces ``_sample`` with :func:`sample_neighbors` when neither kernel is
installed, so batches have PyG's structure either way.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch
import torch_geometric.typing
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.loader import NeighborLoader
from torch_geometric.sampler import NeighborSampler, SamplerOutput

from graphbench.data.samplers.context import SamplerContext, SeedMask


def has_native_sampler() -> bool:
    """Whether PyG's compiled neighbor sampling (pyg-lib or torch-sparse) is installed."""
    return bool(torch_geometric.typing.WITH_PYG_LIB or torch_geometric.typing.WITH_TORCH_SPARSE)


def segment_ids(counts: Tensor) -> Tensor:
    """``[0] * c_0 + [1] * c_1 + ...`` for ``counts = [c_0, c_1, ...]``, i.e.
    ``torch.repeat_interleave(torch.arange(len(counts)), counts)``, computed as a cumulative sum of
    segment-end marks: torch 2.13's CPU ``repeat_interleave`` took 10-30 ms for a few hundred
    elements here, about a hundred times longer."""
    marks = torch.zeros(int(counts.sum()) + 1, dtype=torch.long, device=counts.device)
    marks.index_add_(0, torch.cumsum(counts, 0), torch.ones_like(counts))
    return torch.cumsum(marks[:-1], 0)


def segment_arange(counts: Tensor) -> Tensor:
    """``[0, 1, ..., c_0 - 1, 0, 1, ..., c_1 - 1, ...]`` for ``counts = [c_0, c_1, ...]``."""
    starts = torch.cumsum(counts, 0) - counts
    return torch.arange(int(counts.sum()), device=counts.device) - starts[segment_ids(counts)]


def choose_neighbors(
    start: Tensor, degree: Tensor, k: int, replace: bool, generator: torch.Generator | None = None
) -> tuple[Tensor, Tensor]:
    r"""For every frontier node :math:`i` (its in-edges at CSC positions ``start[i] ..
    start[i] + degree[i] - 1``) choose :math:`\min(k, d_i)` of them uniformly without replacement
    (all of them when ``k < 0``), or :math:`k` with replacement (``replace``; none when :math:`d_i = 0`).
    Returns ``(owner, position)``: the frontier index and CSC position of every choice, grouped by
    owner in frontier order.

    Without replacement, nodes with :math:`d_i > k` give each in-edge a uniform random key and keep
    the :math:`k` smallest keys per node (one sort over those nodes' edges), which is a uniformly
    random :math:`k`-subset; the other nodes keep all their edges."""
    n = degree.numel()
    if replace and k >= 0:
        owner = segment_ids(torch.where(degree > 0, k, 0))
        offset = (
            torch.rand(owner.numel(), generator=generator, dtype=torch.float64, device=degree.device) * degree[owner]
        ).long()
        return owner, start[owner] + offset
    whole = degree <= k if k >= 0 else torch.ones_like(degree, dtype=torch.bool)
    owner_all = torch.arange(n, device=degree.device)[whole][segment_ids(degree[whole])]
    position_all = start[owner_all] + segment_arange(degree[whole])
    subsampled = (~whole).nonzero().view(-1)
    if subsampled.numel() == 0:
        return owner_all, position_all
    counts = degree[subsampled]
    local_owner = segment_ids(counts)
    keys = torch.rand(local_owner.numel(), generator=generator, dtype=torch.float64, device=counts.device) + local_owner
    order = torch.argsort(keys)  # grouped by owner (the integer part), randomly ordered within
    rank = segment_arange(counts)  # the rank of sorted slot j within its owner's group
    keep = order[rank < k]  # slot -> edge offset in the concatenation of the owners' edges
    owner_sub = local_owner[keep]
    offset = keep - (torch.cumsum(counts, 0) - counts)[owner_sub]
    owner = torch.cat([owner_all, subsampled[owner_sub]])
    position = torch.cat([position_all, start[subsampled[owner_sub]] + offset])
    grouped = torch.sort(owner, stable=True).indices
    return owner[grouped], position[grouped]


def sample_neighbors(
    colptr: Tensor,
    row: Tensor,
    seed: Tensor,
    num_neighbors: list[int],
    replace: bool = False,
    generator: torch.Generator | None = None,
) -> SamplerOutput:
    r"""Directional multi-hop neighbor sampling on a graph in CSC form (``colptr``, ``row``: the
    sources of the in-edges of every node), with pyg-lib's output convention:

    - ``node``: global ids of the sampled nodes, the (distinct) ``seed`` nodes first and in order,
      then each hop's new nodes in the order of their first appearance;
    - ``row``, ``col``: local indices of the sampled edges ``row -> col`` (neighbour -> the node that
      sampled it), hop by hop; ``edge``: their CSC positions;
    - ``num_sampled_nodes``, ``num_sampled_edges``: counts per hop.

    Hop :math:`l` samples ``num_neighbors[l]`` in-neighbours (:func:`choose_neighbors`) of every node
    added at hop :math:`l - 1`. Each hop is a handful of vectorized operations; a scratch vector of the
    graph's size maps global to local ids."""
    num_nodes = colptr.numel() - 1
    local = torch.full((num_nodes,), -1, dtype=torch.long, device=colptr.device)
    seed = seed.to(torch.long)
    local[seed] = torch.arange(seed.numel(), device=colptr.device)
    nodes, rows, cols, edges = [seed], [], [], []
    num_sampled_nodes, num_sampled_edges = [seed.numel()], []
    frontier, count = seed, seed.numel()
    for k in num_neighbors:
        start = colptr[frontier]
        owner, position = choose_neighbors(start, colptr[frontier + 1] - start, k, replace, generator)
        neighbor = row[position]
        new = neighbor[local[neighbor] < 0]
        unique, inverse = torch.unique(new, return_inverse=True)
        first = torch.full((unique.numel(),), new.numel(), dtype=torch.long, device=colptr.device)
        first.scatter_reduce_(0, inverse, torch.arange(new.numel(), device=colptr.device), reduce="amin")
        unique = unique[torch.argsort(first)]  # first-appearance order
        local[unique] = torch.arange(count, count + unique.numel(), device=colptr.device)
        rows.append(local[neighbor])
        cols.append(local[frontier[owner]])
        edges.append(position)
        nodes.append(unique)
        num_sampled_nodes.append(unique.numel())
        num_sampled_edges.append(position.numel())
        frontier, count = unique, count + unique.numel()
    return SamplerOutput(
        node=torch.cat(nodes),
        row=torch.cat(rows),
        col=torch.cat(cols),
        edge=torch.cat(edges),
        num_sampled_nodes=num_sampled_nodes,
        num_sampled_edges=num_sampled_edges,
    )


class TorchNeighborSampler(NeighborSampler):
    """PyG's :class:`~torch_geometric.sampler.NeighborSampler` (homogeneous graphs, directional, no
    time) whose sampling is :func:`sample_neighbors` unless ``native`` (default: when pyg-lib or
    torch-sparse is installed), in which case PyG's kernels run unchanged."""

    def __init__(self, data: Data, num_neighbors: list[int], replace: bool = False, native: bool | None = None) -> None:
        with warnings.catch_warnings():  # PyG warns that sampling without pyg-lib is deprecated: this class is the fallback
            warnings.simplefilter("ignore")
            super().__init__(data, num_neighbors, replace=replace)
        self.native = has_native_sampler() if native is None else native

    def _sample(self, seed: Any, seed_time: Any = None, **kwargs: Any) -> SamplerOutput:
        if self.native:
            return super()._sample(seed, seed_time, **kwargs)
        if isinstance(seed, dict) or seed_time is not None:
            raise NotImplementedError("the pure-torch neighbor sampler serves homogeneous graphs without time")
        return sample_neighbors(self.colptr, self.row, seed, self.num_neighbors.get_mapped_values(), self.replace)


def node_neighbor_loader(
    graph: Data,
    split: str,
    seeds: Tensor,
    num_neighbors: list[int],
    batch_size: int,
    context: SamplerContext,
    shuffle: bool,
    replace: bool = False,
) -> NeighborLoader:
    """Batches of ``batch_size`` of the ``seeds`` (nodes of ``split``) with their sampled
    neighbourhoods; each batch's ``{split}_mask`` marks its seeds only (:class:`SeedMask`). Shuffled
    training seeds are ordered by ``context.train_order`` (this rank's part in a data-parallel run)."""
    order = context.train_order(seeds.numel()) if shuffle else {"shuffle": False}
    return NeighborLoader(
        graph,
        num_neighbors=num_neighbors,
        input_nodes=seeds,
        batch_size=batch_size,
        neighbor_sampler=TorchNeighborSampler(graph, num_neighbors, replace=replace),
        transform=SeedMask(split),
        num_workers=context.num_workers,
        persistent_workers=context.num_workers > 0,
        **order,
    )
