"""Positional/structural encodings of a whole :class:`GraphStore`, computed where possible on its
concatenated tensors rather than on one ``Data`` per graph."""

from __future__ import annotations

import torch
from torch_geometric.data import Data
from torch_geometric.transforms import BaseTransform, Compose

from graphbench.data.store.graph_store import GraphStore
from graphbench.speedups.gc_pause import gc_paused
from graphbench.speedups.hugepages import numpy_hugepages_off
from graphbench.transforms.precompute import CollatedGraphs, PECompose, precompute


def precompute_store(store: GraphStore, transform: BaseTransform | None) -> GraphStore:
    r"""``store`` with ``transform`` applied to every graph: a store equal, attribute by attribute and
    bit for bit, to ``GraphStore.from_list(precompute(separated_graphs(store), transform))`` (tested).

    :class:`~torch_geometric.transforms.Compose` and :class:`PECompose` are applied member by
    member. A member with ``transform_collated`` (:class:`~graphbench.transforms.rwse.RWSE`,
    :class:`~graphbench.transforms.lap_pe.LapPE`) encodes the concatenated tensors
    (:class:`CollatedGraphs`) and its node attributes join the store as columns
    (:meth:`GraphStore.with_node_attributes`): no graph is separated, copied or collated again,
    which on Peptides-func cost more than RWSE's walks themselves. Any other member,
    and any store whose layout :func:`collated_graphs` does not cover, goes through
    :func:`~graphbench.transforms.precompute.precompute` on the separated graphs. ``store`` is
    unchanged.
    """
    if transform is None:
        return store
    members = transform.transforms if isinstance(transform, (Compose, PECompose)) else [transform]
    # the columns are fresh arrays of hundreds of MiB, which NumPy's huge-page advice makes slow to
    # fill on some machines (graphbench.speedups.hugepages); the collector is paused as in precompute
    with gc_paused(), numpy_hugepages_off():
        for member in members:
            collated = collated_graphs(store) if hasattr(member, "transform_collated") else None
            if collated is not None:
                store = store.with_node_attributes(member.transform_collated(collated))
            else:
                store = GraphStore.from_list(precompute(separated_graphs(store), member))
    return store


def collated_graphs(store: GraphStore) -> CollatedGraphs | None:
    r"""The edges and node ranges of a whole store (not a split view) as :class:`CollatedGraphs`,
    or ``None`` where the node ranges cannot be read off ``x``'s slices: a ``Data`` subclass (which
    may re-define concatenation), explicit ``num_nodes``, no ``x``, or edge weights sliced unlike
    the edges."""
    data, slices = store.collated, store.slices
    if type(data) is not Data or "num_nodes" in data or "x" not in slices or len(store) != slices["x"].numel() - 1:
        return None
    if "edge_index" in slices:
        edge_index, edge_ptr = data.edge_index, slices["edge_index"]
    else:
        edge_index, edge_ptr = torch.zeros(2, 0, dtype=torch.long, device=slices["x"].device), torch.zeros_like(slices["x"])
    edge_weight = data.get("edge_weight")
    if edge_weight is not None and not torch.equal(slices["edge_weight"], edge_ptr):
        return None
    return CollatedGraphs(edge_index=edge_index, node_ptr=slices["x"], edge_ptr=edge_ptr, edge_weight=edge_weight)


def separated_graphs(store: GraphStore) -> list[Data]:
    """Every graph of ``store`` as its own ``Data``, without the bookkeeping ``idx`` the store adds."""
    graphs = [store.get(i) for i in range(len(store))]
    for graph in graphs:
        del graph.idx
    return graphs
