"""The torchmetrics object that computes a dataset's metric, chosen by its name and task type."""
from __future__ import annotations

from torchmetrics import MeanAbsoluteError, MeanSquaredError, Metric
from torchmetrics.classification import MulticlassAccuracy, MulticlassF1Score

from graphbench.datamodules.info import DatasetInfo
from graphbench.metrics.accuracy import LogitBinaryAccuracy
from graphbench.metrics.log_mse import LogMSE
from graphbench.metrics.node_link import NODE_LINK_METRICS, make_node_link_metric
from graphbench.metrics.taskwise import OGBROCAUC, OGBAveragePrecision

METRICS: tuple[str, ...] = ("ap", "rocauc", "accuracy", "mae", "mse", "log_mse", "f1_macro")


def make_metric(info: DatasetInfo) -> Metric:
    """``ap``/``rocauc``: OGB-style mean over binary tasks (inputs are logits; both metrics are
    rank-based and computed exactly on the raw logits). ``accuracy``: argmax for multiclass, logit > 0 for binary.
    ``mae``/``mse``: regression; ``log_mse``: mean over tasks of log10 MSE (PNA's GraphTheoryProp). ``f1_macro``: macro F1 over classes."""
    name, task = info.metric, info.task_type
    if name == "ap":
        return OGBAveragePrecision()
    if name == "rocauc":
        return OGBROCAUC()
    if name == "accuracy":
        if task == "multiclass":
            return MulticlassAccuracy(num_classes=info.num_outputs, average="micro")
        return LogitBinaryAccuracy()
    if name == "f1_macro" and task == "multiclass":
        return MulticlassF1Score(num_classes=info.num_outputs, average="macro")
    if name == "mae":
        return MeanAbsoluteError()
    if name == "mse":
        return MeanSquaredError()
    if name == "log_mse":
        return LogMSE(num_tasks=info.num_outputs)
    node_link = make_node_link_metric(info)
    if node_link is not None:
        return node_link
    raise ValueError(
        f"metric {name!r} is not defined for task type {task!r}; valid metrics: {list(METRICS + NODE_LINK_METRICS)}"
    )
