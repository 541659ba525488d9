r"""Homophily measures of a node-labelled graph, and a table of them for several datasets.

Every measure is computed, as Platonov et al. (2023, "Characterizing Graph Datasets for Node
Classification: Homophily-Heterophily Dichotomy and Beyond") do, on the simple undirected graph:
each edge in both directions once, self-loops dropped (:func:`simple_undirected`). Below :math:`E` is
that graph's set of undirected edges, :math:`d(v)` the degree of :math:`v`, :math:`N(v)` its
neighbours, :math:`C` the number of classes, :math:`n_k` the number of nodes of class :math:`k`, and
:math:`D_k = \sum_{v: y_v = k} d(v)` the degree of class :math:`k` (so :math:`\sum_k D_k = 2|E|`).
A measure that is undefined on a graph (no edges, one class) is NaN.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence

import torch
from torch import Tensor
from torch_geometric.utils import remove_self_loops, scatter, to_undirected

#: the measures of :func:`homophily_measures`, in table order
MEASURES: tuple[str, ...] = (
    "edge_homophily",
    "node_homophily",
    "class_insensitive_homophily",
    "adjusted_homophily",
    "label_informativeness",
)


def simple_undirected(edge_index: Tensor, num_nodes: int) -> Tensor:
    """Each undirected edge ``{u, v}`` (``u != v``) as the two directed edges ``(u, v)`` and ``(v, u)``,
    once each, sorted: PyG's ``to_undirected`` (which also coalesces duplicates) after ``remove_self_loops``."""
    edge_index, _ = remove_self_loops(edge_index)
    return to_undirected(edge_index, num_nodes=num_nodes)


def _prepared(edge_index: Tensor, y: Tensor, num_nodes: int) -> tuple[Tensor, Tensor]:
    """The simple undirected edges and the labels as a 1-D integer vector, checked."""
    y = y.view(-1) if y.dim() == 2 and y.size(1) == 1 else y
    if y.dim() != 1 or y.numel() != num_nodes or y.is_floating_point() or (y.numel() and int(y.min()) < 0):
        raise ValueError(
            f"homophily needs one class index >= 0 per node ({num_nodes} nodes), got labels of shape {tuple(y.shape)} "
            f"and dtype {y.dtype}; multilabel and regression targets have no homophily in this sense"
        )
    return simple_undirected(edge_index, num_nodes), y.long()


def _edge_homophily(edges: Tensor, y: Tensor) -> float:
    if edges.size(1) == 0:
        return math.nan
    return float((y[edges[0]] == y[edges[1]]).double().mean())


def edge_homophily(edge_index: Tensor, y: Tensor, num_nodes: int) -> float:
    r"""Edge homophily (Zhu et al. 2020): the fraction of edges joining nodes of one class,
    :math:`h_{edge} = |\{\{u, v\} \in E : y_u = y_v\}| / |E|`."""
    return _edge_homophily(*_prepared(edge_index, y, num_nodes))


def _node_homophily(edges: Tensor, y: Tensor, num_nodes: int) -> float:
    same = (y[edges[0]] == y[edges[1]]).double()
    local = scatter(same, edges[1], dim=0, dim_size=num_nodes, reduce="sum")
    deg = scatter(torch.ones_like(same), edges[1], dim=0, dim_size=num_nodes, reduce="sum")
    connected = deg > 0
    return float((local[connected] / deg[connected]).mean()) if bool(connected.any()) else math.nan


def node_homophily(edge_index: Tensor, y: Tensor, num_nodes: int) -> float:
    r"""Node homophily (Pei et al. 2020, Geom-GCN): the mean over nodes of the fraction of a node's
    neighbours that share its class, :math:`h_{node} = \frac{1}{|V'|} \sum_{v \in V'} |\{u \in N(v) :
    y_u = y_v\}| / d(v)`, over the nodes :math:`V'` with at least one neighbour (an isolated node's
    fraction is 0/0). PyG's and DGL's ``node`` homophily count isolated nodes as 0 instead, so they
    agree with this one exactly on graphs without isolated nodes."""
    edges, y = _prepared(edge_index, y, num_nodes)
    return _node_homophily(edges, y, num_nodes)


def _class_insensitive_homophily(edges: Tensor, y: Tensor, num_classes: int) -> float:
    if edges.size(1) == 0 or num_classes < 2:
        return math.nan
    target_class = y[edges[1]]
    same = (y[edges[0]] == target_class).double()
    same_per_class = scatter(same, target_class, dim=0, dim_size=num_classes, reduce="sum")
    degree_per_class = scatter(torch.ones_like(same), target_class, dim=0, dim_size=num_classes, reduce="sum")
    h = same_per_class / degree_per_class.clamp(min=1)  # 0 for a class without edges, as in PyG
    proportions = torch.bincount(y, minlength=num_classes).double() / y.numel()
    return float((h - proportions).clamp(min=0).sum() / (num_classes - 1))


def class_insensitive_homophily(edge_index: Tensor, y: Tensor, num_nodes: int, num_classes: int | None = None) -> float:
    r"""Class-insensitive edge homophily (Lim et al. 2021, "Large Scale Learning on Non-Homophilous
    Graphs"): :math:`\hat h = \frac{1}{C - 1} \sum_{k=1}^{C} \big[h_k - \frac{n_k}{n}\big]_+` with
    :math:`h_k = \sum_{v: y_v = k} |\{u \in N(v) : y_u = k\}| / D_k` the edge homophily of class
    :math:`k` (0 for a class without edges). ``num_classes`` defaults to ``max(y) + 1``, as in PyG."""
    edges, y = _prepared(edge_index, y, num_nodes)
    return _class_insensitive_homophily(edges, y, int(y.max()) + 1 if num_classes is None else num_classes)


def _class_degree_distribution(edges: Tensor, y: Tensor) -> Tensor:
    r""":math:`\bar p_k = D_k / 2|E|` (the class of an edge's endpoint drawn uniformly)."""
    counts = torch.bincount(y[edges[0]], minlength=int(y.max()) + 1).double()
    return counts / counts.sum()


def _adjusted_homophily(edges: Tensor, y: Tensor) -> float:
    if edges.size(1) == 0:
        return math.nan
    expected = float((_class_degree_distribution(edges, y) ** 2).sum())
    return (_edge_homophily(edges, y) - expected) / (1 - expected) if expected < 1 else math.nan


def adjusted_homophily(edge_index: Tensor, y: Tensor, num_nodes: int) -> float:
    r"""Adjusted homophily (Platonov et al. 2023, eq. 4): edge homophily corrected for the homophily
    expected when edges join endpoints drawn independently by degree,
    :math:`h_{adj} = \big(h_{edge} - \sum_k \bar p_k^2\big) / \big(1 - \sum_k \bar p_k^2\big)` with
    :math:`\bar p_k = D_k / 2|E|`. 0 for a random graph, 1 for a perfectly homophilous one, negative
    below chance."""
    return _adjusted_homophily(*_prepared(edge_index, y, num_nodes))


def _label_informativeness(edges: Tensor, y: Tensor) -> float:
    if edges.size(1) == 0:
        return math.nan
    num_classes = int(y.max()) + 1
    joint = torch.zeros(num_classes, num_classes, dtype=torch.float64, device=y.device)
    joint.index_put_((y[edges[0]], y[edges[1]]), torch.ones(edges.size(1), dtype=torch.float64, device=y.device), accumulate=True)
    joint /= joint.sum()
    marginal = _class_degree_distribution(edges, y)
    marginal_entropy = -float(torch.special.xlogy(marginal, marginal).sum())
    joint_entropy = -float(torch.special.xlogy(joint, joint).sum())
    return 2 - joint_entropy / marginal_entropy if marginal_entropy > 0 else math.nan


def label_informativeness(edge_index: Tensor, y: Tensor, num_nodes: int) -> float:
    r"""Edge label informativeness (Platonov et al. 2023, eq. 5): how much the label of one endpoint
    of a uniformly drawn edge :math:`(\xi, \eta)` tells about the other's, the normalised mutual
    information :math:`LI = I(y_\xi, y_\eta) / H(y_\xi) = 2 - H(y_\xi, y_\eta) / H(y_\xi)` with
    :math:`p(c_1, c_2)` the fraction of directed edges from class :math:`c_1` to :math:`c_2` and
    :math:`H(y_\xi) = -\sum_k \bar p_k \log \bar p_k`. DGL's ``edge_label_informativeness``
    computes the same (with an ``eps`` of 1e-8 added to :math:`p`)."""
    return _label_informativeness(*_prepared(edge_index, y, num_nodes))


def homophily_measures(edge_index: Tensor, y: Tensor, num_nodes: int, num_classes: int | None = None) -> dict[str, float]:
    """All :data:`MEASURES` of one graph, with its size: ``num_nodes``, ``num_edges`` (undirected, no
    self-loops) and ``num_classes``; the graph is simplified once."""
    edges, y = _prepared(edge_index, y, num_nodes)
    num_classes = (int(y.max()) + 1 if y.numel() else 0) if num_classes is None else num_classes
    return {
        "num_nodes": num_nodes,
        "num_edges": edges.size(1) // 2,
        "num_classes": num_classes,
        "edge_homophily": _edge_homophily(edges, y),
        "node_homophily": _node_homophily(edges, y, num_nodes),
        "class_insensitive_homophily": _class_insensitive_homophily(edges, y, num_classes),
        "adjusted_homophily": _adjusted_homophily(edges, y),
        "label_informativeness": _label_informativeness(edges, y),
    }


def _cell(value: object, decimals: int | None) -> str:
    if isinstance(value, float) and decimals is not None:
        return f"{value:.{decimals}f}" if math.isfinite(value) else "n/a"
    return str(value)


def homophily_table(rows: Sequence[Mapping[str, object]], *, csv_format: bool = False, decimals: int = 4) -> str:
    """``rows`` (e.g. ``{"dataset": name, **homophily_measures(...)}``) as a markdown table, numbers
    with ``decimals`` decimals and ``n/a`` for NaN, or with ``csv_format`` as CSV at full precision.
    The columns are the rows' keys in first-seen order."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    if csv_format:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[_cell(row.get(c, ""), None) for c in columns] for row in rows])
        return out.getvalue()
    cells = [[_cell(row.get(c, ""), decimals) for c in columns] for row in rows]
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(lines) + "\n"
