"""Bulk collation of per-graph tensors of any dtype into one ``(data, slices)`` pair.

:func:`graph_store.collate_arrays` covers long-typed molecule features; datasets with float
features (superpixels, TU attributes), node-level targets or extra per-node attributes (masks) use
these functions. Both keep PyG's in-memory convention: ``edge_index`` holds graph-local node ids.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import torch
from torch import Tensor
from torch_geometric.data import Data

from graphbench.errors import DataError


def _ptr(counts: Tensor) -> Tensor:
    return torch.cat([counts.new_zeros(1), counts.cumsum(0)])


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
    ``x``); ``edge``: attributes with ``E`` rows; ``graph``: attributes with ``G`` rows (e.g. ``y``).
    """
    if not node:
        raise ValueError("collate_concatenated needs at least one node attribute (e.g. x) to know the graph sizes")
    num_nodes, num_edges = num_nodes.long(), num_edges.long()
    node_ptr, edge_ptr = _ptr(num_nodes), _ptr(num_edges)
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
        data[key], slices[key] = value, torch.arange(num_nodes.numel() + 1)
    return data, slices


def collate_graph_list(
    edge_index: Sequence[Tensor],
    node: Mapping[str, Sequence[Tensor]],
    edge: Mapping[str, Sequence[Tensor]] | None = None,
    graph: Mapping[str, Tensor] | None = None,
) -> tuple[Data, dict[str, Tensor]]:
    """Collate per-graph tensors: ``edge_index[i]`` is [2, E_i] with local ids; ``node[key][i]`` has
    one row per node of graph ``i``, ``edge[key][i]`` one row per edge; ``graph[key]`` one row per graph."""
    first = next(iter(node.values()))
    num_nodes = torch.tensor([t.size(0) for t in first], dtype=torch.long)
    num_edges = torch.tensor([t.size(1) for t in edge_index], dtype=torch.long)
    cat_edge_index = torch.cat(list(edge_index), dim=1) if len(edge_index) else torch.zeros(2, 0, dtype=torch.long)
    return collate_concatenated(
        num_nodes,
        num_edges,
        cat_edge_index,
        {k: torch.cat(list(v)) for k, v in node.items()},
        {k: torch.cat(list(v)) for k, v in (edge or {}).items()},
        graph,
    )


def node_level_split_attributes(num_nodes: Tensor, split_of_graph: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """Per-node ``{split}_mask`` (True on every node of the split's graphs) and ``n_id`` (the node's
    position in the whole dataset), for node-level tasks on many graphs: the task module selects the
    outputs of ``split`` with ``batch[f"{split}_mask"]`` and aligns predictions by ``n_id``."""
    graph_of_node = torch.repeat_interleave(torch.arange(num_nodes.numel()), num_nodes)
    attrs: dict[str, Tensor] = {}
    for split, graphs in split_of_graph.items():
        in_split = torch.zeros(num_nodes.numel(), dtype=torch.bool)
        in_split[graphs] = True
        attrs[f"{split}_mask"] = in_split[graph_of_node]
    attrs["n_id"] = torch.arange(int(num_nodes.sum()))
    return attrs
