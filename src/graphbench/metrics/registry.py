"""The one registry of task metrics: a dataset's ``metric`` name -> the torchmetrics object that
computes it. The list of valid names shown in errors is derived from it.

Every metric takes raw model outputs (logits for classification) and targets, as the task module
gives them; names are ``{split}/{name}`` in logs and ``results.json``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from torchmetrics import MeanAbsoluteError, MeanSquaredError, Metric
from torchmetrics.classification import MulticlassAccuracy, MulticlassF1Score

from graphbench.data.info import DatasetInfo
from graphbench.metrics.accuracy import LogitBinaryAccuracy
from graphbench.metrics.f1 import LogitBinaryF1
from graphbench.metrics.hits import HitsAtK
from graphbench.metrics.log_mse import LogMSE
from graphbench.metrics.mrr import MRR_METRICS, LinkRankingMetric
from graphbench.metrics.taskwise import OGBROCAUC, OGBAveragePrecision
from graphbench.metrics.weighted_accuracy import WeightedAccuracy


@dataclass(frozen=True)
class MetricSpec:
    """One metric: its name (a regex when it is a family, e.g. ``hits@K``), the task types it is
    defined for, and how to build it for a dataset (``match`` holds the name's groups)."""

    name: str
    task_types: tuple[str, ...]
    build: Callable[[DatasetInfo, re.Match[str]], Metric]
    pattern: str | None = None
    description: str = ""

    def match(self, name: str) -> re.Match[str] | None:
        return re.fullmatch(self.pattern or re.escape(self.name), name)


_CLASSIFICATION = ("binary", "multilabel", "multiclass")

REGISTRY: tuple[MetricSpec, ...] = (
    MetricSpec(
        "ap",
        ("binary", "multilabel"),
        lambda i, m: OGBAveragePrecision(),
        description="OGB-style mean average precision over labelled tasks",
    ),
    MetricSpec(
        "rocauc",
        ("binary", "multilabel"),
        lambda i, m: OGBROCAUC(),
        description="OGB-style mean ROC-AUC over tasks with both classes",
    ),
    MetricSpec(
        "accuracy",
        ("multiclass",),
        lambda i, m: MulticlassAccuracy(num_classes=i.num_outputs, average="micro"),
        description="argmax accuracy",
    ),
    MetricSpec("accuracy", ("binary", "multilabel"), lambda i, m: LogitBinaryAccuracy(), description="accuracy of logit > 0"),
    MetricSpec(
        "f1_macro",
        ("multiclass",),
        lambda i, m: MulticlassF1Score(num_classes=i.num_outputs, average="macro"),
        description="macro F1 over classes",
    ),
    MetricSpec(
        "weighted_accuracy",
        ("multiclass",),
        lambda i, m: WeightedAccuracy(num_classes=i.num_outputs),
        description="class-balanced accuracy",
    ),
    MetricSpec("f1", ("binary",), lambda i, m: LogitBinaryF1(), description="F1 of the positive class"),
    MetricSpec("mae", ("regression",), lambda i, m: MeanAbsoluteError()),
    MetricSpec("mse", ("regression",), lambda i, m: MeanSquaredError()),
    MetricSpec(
        "log_mse",
        ("regression",),
        lambda i, m: LogMSE(num_tasks=i.num_outputs),
        description="mean over targets of log10 MSE (PNA)",
    ),
    MetricSpec(
        "hits@K",
        _CLASSIFICATION,
        lambda i, m: HitsAtK(k=int(m.group(1))),
        pattern=r"hits@([1-9][0-9]*)",
        description="OGB Hits@K of link prediction",
    ),
    *(
        MetricSpec(
            name,
            _CLASSIFICATION,
            lambda i, m: LinkRankingMetric(monitor=m.group(0)),
            description="link-ranking MRR (all variants logged)",
        )
        for name in MRR_METRICS
    ),
)


def metric_names() -> list[str]:
    """Every valid metric name (``hits@K`` stands for any positive integer K), in registry order."""
    return list(dict.fromkeys(spec.name for spec in REGISTRY))


def make_metric(info: DatasetInfo) -> Metric:
    """The metric named by ``info.metric`` for ``info.task_type``; a ``ValueError`` lists the valid
    names (and, for a known name, the task types it is defined for)."""
    known = False
    for spec in REGISTRY:
        match = spec.match(info.metric)
        if match is None:
            continue
        known = True
        if info.task_type in spec.task_types:
            return spec.build(info, match)
    if known:
        types = sorted({t for s in REGISTRY if s.match(info.metric) for t in s.task_types})
        raise ValueError(f"metric {info.metric!r} is not defined for task type {info.task_type!r}; it is defined for {types}")
    raise ValueError(f"unknown metric {info.metric!r}; valid metrics: {metric_names()}")
