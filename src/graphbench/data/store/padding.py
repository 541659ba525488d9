r"""Mini-batches of many graphs padded to a few static shapes (``dataset.pad_to=buckets``).

A batch of graphs has new node and edge counts every step, so a compiled network sees a new shape
every step (dynamic shapes) and CUDA graphs, which replay fixed shapes, cannot be used. Padding every
batch to the smallest of a handful of *buckets* (:class:`Bucket`: a node and an edge capacity) leaves
a compiled network that many shapes to compile for, once each.

:func:`pad_batch` pads a batch of :math:`G` graphs, :math:`N` nodes and :math:`E` edges to a bucket of
:math:`N_b > N` nodes and :math:`E_b \ge E` edges and to ``graphs`` graphs:

- the :math:`N_b - N \ge 1` dummy nodes (every node attribute zero) form the last graph, graph
  ``graphs - 1``; graphs :math:`G, \dots, \mathrm{graphs} - 2` are empty;
- the :math:`E_b - E` dummy edges are self-loops on the first dummy node (every edge attribute zero);
  no edge joins a dummy node to a real one, so message passing leaves the real nodes as they were;
- ``node_mask`` [:math:`N_b`] and ``edge_mask`` [:math:`E_b`] are true on the real rows: the masked
  BatchNorm (:class:`graphbench.modules.norms.MaskedBatchNorm1d`) takes its statistics over those rows
  only;
- graph attributes (``y``, ``idx``) keep the :math:`G` real graphs' rows, and ``num_real_graphs = G``:
  the task module keeps the first :math:`G` rows of the network's output (the pooled dummy graphs come
  after them), so that losses, metrics and predictions are the unpadded batch's.

:func:`choose_buckets` picks the buckets once, from the training split (see its docstring).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor
from torch_geometric.data import Batch, Data

from graphbench.vocabulary.errors import DataError

#: the quantiles of the per-batch node and edge totals that become buckets (the worst case is added)
QUANTILES: tuple[float, ...] = (0.5, 0.9, 0.99)
#: shuffled epochs of the training split whose batches give the per-batch totals
EPOCHS = 16
#: bucket capacities are rounded up to a multiple of this
MULTIPLE = 8


@dataclass(frozen=True)
class Bucket:
    """A padded batch's shape: ``nodes`` rows of node attributes (at least one of them a dummy node) and
    ``edges`` rows of edge attributes."""

    nodes: int
    edges: int


@dataclass(frozen=True)
class Buckets:
    """The buckets of a dataset, smallest first, and the number of graphs of every padded batch
    (``dataset.batch_size`` + 1: the last graph holds the dummy nodes)."""

    sizes: tuple[Bucket, ...]
    graphs: int

    def fit(self, num_nodes: int, num_edges: int) -> Bucket:
        """The smallest bucket with room for ``num_nodes`` nodes plus a dummy node and ``num_edges`` edges."""
        for bucket in self.sizes:
            if num_nodes < bucket.nodes and num_edges <= bucket.edges:
                return bucket
        raise DataError(f"a batch of {num_nodes} nodes and {num_edges} edges fits none of the buckets {self.sizes}")


def round_up(value: int, multiple: int = MULTIPLE) -> int:
    return multiple * math.ceil(value / multiple)


def choose_buckets(
    node_counts: Tensor,
    edge_counts: Tensor,
    train: Tensor,
    batch_size: int,
    quantiles: tuple[float, ...] = QUANTILES,
    epochs: int = EPOCHS,
    seed: int = 0,
) -> Buckets:
    r"""Buckets for batches of ``batch_size`` graphs of a dataset whose graph :math:`i` has
    ``node_counts[i]`` nodes and ``edge_counts[i]`` edges, from its training graphs ``train``.

    The per-batch totals :math:`(N_t, E_t)` are those of the full batches of ``epochs`` shuffles of the
    training graphs (a fixed ``seed``: the same buckets every run), as the training loader draws them.
    Bucket :math:`k` holds the ``quantiles[k]``-quantile of the node totals plus one dummy node, and that
    of the edge totals, each rounded up to a multiple of :data:`MULTIPLE`. A last bucket holds the
    worst case over the whole dataset (every split): the ``batch_size`` largest node counts summed, plus
    one, and the ``batch_size`` largest edge counts summed, so that every batch of every split fits one.
    Capacities grow with :math:`k` (a cumulative maximum) and repeats are dropped.
    """
    node_counts, edge_counts = node_counts.long().cpu(), edge_counts.long().cpu()
    train = train.long().cpu()
    per_batch = min(batch_size, train.numel())
    generator = torch.Generator().manual_seed(seed)
    node_totals, edge_totals = [], []
    for _ in range(epochs):
        order = train[torch.randperm(train.numel(), generator=generator)]
        batches = order[: train.numel() // per_batch * per_batch].view(-1, per_batch)
        node_totals.append(node_counts[batches].sum(dim=1))
        edge_totals.append(edge_counts[batches].sum(dim=1))
    nodes, edges = torch.cat(node_totals).double(), torch.cat(edge_totals).double()
    levels = torch.tensor(quantiles, dtype=torch.double)
    node_caps = [round_up(int(n) + 1) for n in torch.quantile(nodes, levels, interpolation="higher")]
    edge_caps = [round_up(int(e)) for e in torch.quantile(edges, levels, interpolation="higher")]
    largest = min(batch_size, node_counts.numel())
    node_caps.append(round_up(int(node_counts.topk(largest).values.sum()) + 1))
    edge_caps.append(round_up(int(edge_counts.topk(largest).values.sum())))
    sizes: list[Bucket] = []
    for n, e in zip(node_caps, edge_caps):
        if sizes:
            n, e = max(n, sizes[-1].nodes), max(e, sizes[-1].edges)
        if not sizes or Bucket(n, e) != sizes[-1]:
            sizes.append(Bucket(n, e))
    return Buckets(tuple(sizes), batch_size + 1)


def pad_batch(batch: Batch, bucket: Bucket, graphs: int) -> Batch:
    """``batch`` padded to ``bucket`` and to ``graphs`` graphs (see the module docstring), every tensor
    on the device of ``batch``. Node and edge attributes are told apart as PyG tells them apart
    (``Data.is_node_attr``/``is_edge_attr``); other attributes keep their rows."""
    num_nodes, num_edges, num_graphs = int(batch.num_nodes), int(batch.num_edges), int(batch.num_graphs)
    extra_nodes, extra_edges = bucket.nodes - num_nodes, bucket.edges - num_edges
    if extra_nodes < 1 or extra_edges < 0 or num_graphs >= graphs:
        raise DataError(
            f"a batch of {num_graphs} graphs, {num_nodes} nodes and {num_edges} edges does not fit {bucket} with {graphs} graphs"
        )
    device = batch.batch.device
    out = Batch(_base_cls=Data)
    for key, value in batch.items():
        if key in ("batch", "ptr") or not isinstance(value, Tensor):
            continue
        if key == "edge_index":
            loops = torch.full((2, extra_edges), num_nodes, dtype=value.dtype, device=device)
            out[key] = torch.cat([value, loops], dim=1)
        elif batch.is_node_attr(key):
            out[key] = _append_zeros(value, batch.__cat_dim__(key, value), extra_nodes)
        elif batch.is_edge_attr(key):
            out[key] = _append_zeros(value, batch.__cat_dim__(key, value), extra_edges)
        else:
            out[key] = value
    out.batch = torch.cat([batch.batch, torch.full((extra_nodes,), graphs - 1, dtype=torch.long, device=device)])
    empty = torch.full((graphs - 1 - num_graphs,), num_nodes, dtype=torch.long, device=device)
    last = torch.full((1,), bucket.nodes, dtype=torch.long, device=device)
    out.ptr = torch.cat([batch.ptr, empty, last])
    out.node_mask = torch.arange(bucket.nodes, device=device) < num_nodes
    out.edge_mask = torch.arange(bucket.edges, device=device) < num_edges
    out.num_real_graphs = num_graphs
    return out


def _append_zeros(value: Tensor, dim: int, count: int) -> Tensor:
    shape = list(value.shape)
    shape[dim] = count
    return torch.cat([value, value.new_zeros(shape)], dim=dim)


def real_graphs(output: Tensor, batch: Batch) -> Tensor:
    """The rows of a graph-level ``output`` that belong to real graphs: the first ``num_real_graphs`` of a
    padded batch, every row of another batch."""
    return output[: batch.num_real_graphs] if "num_real_graphs" in batch else output


class PaddingCollater:
    """A loader's ``collate_fn`` whose batches are padded: ``collate(positions)`` padded to the smallest
    bucket of ``buckets`` that fits it."""

    def __init__(self, collate: Callable[[list[int]], Batch], buckets: Buckets) -> None:
        self.collate = collate
        self.buckets = buckets

    def __call__(self, positions: list[int]) -> Batch:
        batch = self.collate(positions)
        return pad_batch(batch, self.buckets.fit(int(batch.num_nodes), int(batch.num_edges)), self.buckets.graphs)
