from __future__ import annotations

import pytest
import torch

from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.metrics.f1 import LogitBinaryF1
from graphbench.metrics.hits import HitsAtK
from graphbench.metrics.mrr import LinkRankingMetric
from graphbench.metrics.registry import make_metric, metric_names
from graphbench.metrics.weighted_accuracy import WeightedAccuracy


def info(task_type: str, metric: str, num_outputs: int = 1) -> DatasetInfo:
    return DatasetInfo("toy", "graph", task_type, num_outputs, metric, True, FeatureSpec("constant"), None)  # type: ignore[arg-type]


def test_binary_accuracy_thresholds_logits_at_zero() -> None:
    metric = make_metric(info("binary", "accuracy"))
    # logits inside [0, 1] must not be mistaken for probabilities: 0.3 > 0 is a positive prediction
    metric.update(torch.tensor([[0.3], [-0.2], [0.9], [-4.0]]), torch.tensor([[1.0], [0.0], [0.0], [0.0]]))
    assert metric.compute().item() == pytest.approx(0.75)


def test_multiclass_accuracy() -> None:
    metric = make_metric(info("multiclass", "accuracy", 3))
    metric.update(torch.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 1.0]]), torch.tensor([0, 1]))
    assert metric.compute().item() == pytest.approx(0.5)


def test_unknown_metric_lists_valid_ones() -> None:
    with pytest.raises(ValueError, match="valid metrics"):
        make_metric(info("regression", "ap-at-5"))


def test_valid_names_come_from_the_registry() -> None:
    names = metric_names()
    assert names[:3] == ["ap", "rocauc", "accuracy"]
    assert {"hits@K", "mrr", "mrr_filtered", "mrr_ext_filtered", "f1", "weighted_accuracy", "log_mse"} <= set(names)
    assert len(names) == len(set(names))


def test_metric_families_and_task_types() -> None:
    assert make_metric(info("binary", "hits@20")).k == 20
    with pytest.raises(
        ValueError, match=r"'f1_macro' is not defined for task type 'regression'; it is defined for \['multiclass'\]"
    ):
        make_metric(info("regression", "f1_macro"))


def test_registry_maps_node_and_link_names_to_metrics() -> None:
    assert isinstance(make_metric(info("multiclass", "weighted_accuracy", 6)), WeightedAccuracy)
    assert isinstance(make_metric(info("binary", "f1")), LogitBinaryF1)
    hits = make_metric(info("binary", "hits@20"))
    assert isinstance(hits, HitsAtK) and hits.k == 20
    ranking = make_metric(info("binary", "mrr_ext_filtered"))
    assert isinstance(ranking, LinkRankingMetric) and ranking.monitor == "mrr_ext_filtered"
    with pytest.raises(ValueError, match="'weighted_accuracy' is not defined for task type 'binary'"):
        make_metric(info("binary", "weighted_accuracy"))
