"""Collating a dataset in bulk into the ``(data, slices)`` pair a :class:`GraphStore` holds.

The one API a source uses to turn what it read into a store:

- :func:`collate`: per-graph tensors (``edge_index[i]``, ``node[key][i]``, ...), any dtype.
- :func:`collate_concatenated`: the same, already concatenated over graphs (plus per-graph counts).
- :meth:`GraphStore.from_list <graphbench.data.store.graph_store.GraphStore.from_list>`: a list of
  ``Data`` objects, through PyG's own collate, for attributes that are neither per node, per edge nor
  per graph (e.g. labelled node pairs ``edge_label_index``).

Both functions keep PyG's in-memory convention: ``edge_index`` holds graph-local node ids (they are
offset only when a mini-batch is formed), and build no ``Data`` object per graph.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.utils import cumsum, index_to_mask

from graphbench.vocabulary.errors import DataError


def collate_concatenated(
    num_nodes: Tensor,
    num_edges: Tensor,
    edge_index: Tensor,
    node: Mapping[str, Tensor],
    edge: Mapping[str, Tensor] | None = None,
    graph: Mapping[str, Tensor] | None = None,
) -> tuple[Data, dict[str, Tensor]]:
    r"""Collate a dataset that is already concatenated over graphs.

    ``num_nodes``/``num_edges``: [G] counts. ``edge_index``: [2, E] graph-local ids, edges grouped by
    graph in graph order. ``node``: attributes with ``num_nodes.sum()`` rows (at least one, e.g.
    ``x``; node-level targets ``y`` go here too); ``edge``: attributes with ``E`` rows; ``graph``:
    attributes with ``G`` rows (e.g. graph-level ``y``).
    """
    if not node:
        raise ValueError("collate_concatenated needs at least one node attribute (e.g. x) to know the graph sizes")
    num_nodes, num_edges = num_nodes.long(), num_edges.long()
    node_ptr, edge_ptr = cumsum(num_nodes), cumsum(num_edges)
    data = Data(edge_index=edge_index.long())
    slices: dict[str, Tensor] = {"edge_index": edge_ptr}
    for key, value in node.items():
        if value.size(0) != int(node_ptr[-1]):
            raise DataError(f"node attribute '{key}' has {value.size(0)} rows for {int(node_ptr[-1])} nodes")
        data[key], slices[key] = value, node_ptr
    for key, value in (edge or {}).items():
        if value.size(0) != int(edge_ptr[-1]):
            raise DataError(f"edge attribute '{key}' has {value.size(0)} rows for {int(edge_ptr[-1])} edges")
        data[key], slices[key] = value, edge_ptr
    for key, value in (graph or {}).items():
        if value.size(0) != num_nodes.numel():
            raise DataError(f"graph attribute '{key}' has {value.size(0)} rows for {num_nodes.numel()} graphs")
        data[key], slices[key] = value, torch.arange(num_nodes.numel() + 1, device=num_nodes.device)
    return data, slices


def collate(
    edge_index: Sequence[Tensor],
    node: Mapping[str, Sequence[Tensor]],
    edge: Mapping[str, Sequence[Tensor]] | None = None,
    graph: Mapping[str, Tensor] | None = None,
) -> tuple[Data, dict[str, Tensor]]:
    """Collate per-graph tensors: ``edge_index[i]`` is [2, E_i] with local ids; ``node[key][i]`` has
    one row per node of graph ``i``, ``edge[key][i]`` one row per edge; ``graph[key]`` one row per graph."""
    first = next(iter(node.values()))
    device = first[0].device if len(first) else torch.device("cpu")
    num_nodes = torch.tensor([t.size(0) for t in first], dtype=torch.long, device=device)
    num_edges = torch.tensor([t.size(1) for t in edge_index], dtype=torch.long, device=device)
    cat_edge_index = torch.cat(list(edge_index), dim=1) if len(edge_index) else torch.zeros(2, 0, dtype=torch.long, device=device)
    return collate_concatenated(
        num_nodes,
        num_edges,
        cat_edge_index,
        {k: torch.cat(list(v)) for k, v in node.items()},
        {k: torch.cat(list(v)) for k, v in (edge or {}).items()},
        graph,
    )


def node_split_masks(num_nodes: Tensor, split_of_graph: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """Per-node ``{split}_mask`` for a dataset of many graphs split by graph: True on every node of
    the split's graphs. ``num_nodes``: [G] node counts; ``split_of_graph``: the graph indices of each split."""
    graph_of_node = torch.repeat_interleave(torch.arange(num_nodes.numel(), device=num_nodes.device), num_nodes)
    return {
        f"{split}_mask": index_to_mask(graphs, size=num_nodes.numel())[graph_of_node] for split, graphs in split_of_graph.items()
    }
