"""Analyses of datasets and runs: ``python -m graphbench.analysis <analysis> ...``.

:mod:`~graphbench.analysis.homophily`: edge, node, class-insensitive and adjusted homophily and label
informativeness of node-labelled graphs (``python -m graphbench.analysis homophily dataset=cora``).
"""

from graphbench.analysis.homophily import (
    MEASURES,
    adjusted_homophily,
    class_insensitive_homophily,
    edge_homophily,
    homophily_measures,
    homophily_table,
    label_informativeness,
    node_homophily,
)

__all__ = [
    "MEASURES",
    "adjusted_homophily",
    "class_insensitive_homophily",
    "edge_homophily",
    "homophily_measures",
    "homophily_table",
    "label_informativeness",
    "node_homophily",
]
