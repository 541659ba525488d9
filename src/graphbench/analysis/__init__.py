"""Analyses of datasets and runs: ``python -m graphbench.analysis <analysis> ...``.

:mod:`~graphbench.analysis.homophily`: edge, node, class-insensitive and adjusted homophily and label
informativeness of node-labelled graphs (``python -m graphbench.analysis homophily dataset=cora``).

The others: :mod:`~graphbench.analysis.subset_training` (the configured model trained on a subset of
a graph's nodes); NCMemo's :mod:`~graphbench.analysis.memorization` (``task=memorization``, its plots
and tables in :mod:`~graphbench.analysis.memorization_plots`) and
:mod:`~graphbench.analysis.label_disagreement`; :mod:`~graphbench.analysis.mia` (LiRA membership
inference, ``task=mia``); :mod:`~graphbench.analysis.ntk_curves` (NTK alignment over training);
:mod:`graphbench.analysis.igb` (IGB's protocols: ``task=igb``, ``iid_eval``, ``validutil``). The
command line is ``__main__``.
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
