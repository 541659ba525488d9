"""The metrics of the node- and link-level datasets, by name (for ``metrics.factory.make_metric``)."""
from __future__ import annotations

import re

from torchmetrics import Metric

from graphbench.datamodules.info import DatasetInfo
from graphbench.metrics.f1 import LogitBinaryF1
from graphbench.metrics.hits import HitsAtK
from graphbench.metrics.mrr import MRR_METRICS, LinkRankingMetric
from graphbench.metrics.weighted_accuracy import WeightedAccuracy

#: names understood here; ``hits@K`` stands for any positive integer K
NODE_LINK_METRICS: tuple[str, ...] = ("weighted_accuracy", "f1", "hits@K", *MRR_METRICS)


def make_node_link_metric(info: DatasetInfo) -> Metric | None:
    """``weighted_accuracy``: class-balanced accuracy (multiclass); ``f1``: F1 of the positive class of
    binary logits; ``hits@K``: OGB's Hits@K; ``mrr``/``mrr_filtered``/``mrr_ext_filtered``: link-ranking
    metrics (all variants and Hits@1/3/10 are logged; the named one is monitored). ``None`` for other
    names."""
    name = info.metric
    if name == "weighted_accuracy" and info.task_type == "multiclass":
        return WeightedAccuracy(num_classes=info.num_outputs)
    if name == "f1" and info.task_type == "binary":
        return LogitBinaryF1()
    hits = re.fullmatch(r"hits@([1-9][0-9]*)", name)
    if hits:
        return HitsAtK(k=int(hits.group(1)))
    if name in MRR_METRICS:
        return LinkRankingMetric(monitor=name)
    return None
