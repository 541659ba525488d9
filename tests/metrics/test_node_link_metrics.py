from __future__ import annotations

import pytest
import torch
from sklearn.metrics import balanced_accuracy_score, f1_score

from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.metrics.f1 import LogitBinaryF1
from graphbench.metrics.hits import HitsAtK
from graphbench.metrics.mrr import LinkRankingMetric
from graphbench.metrics.registry import make_metric
from graphbench.metrics.weighted_accuracy import WeightedAccuracy


def test_weighted_accuracy_is_mean_per_class_recall() -> None:
    target = torch.tensor([0, 0, 0, 0, 0, 0, 0, 0, 1, 1])
    majority = torch.tensor([[1.0, 0.0]]).repeat(10, 1)
    metric = WeightedAccuracy(num_classes=2)
    metric.update(majority, target)
    assert metric.compute().item() == pytest.approx(0.5)  # plain accuracy would say 0.8
    gen = torch.Generator().manual_seed(0)
    logits, labels = torch.randn(200, 4, generator=gen), torch.randint(0, 4, (200,), generator=gen)
    metric = WeightedAccuracy(num_classes=4)
    metric.update(logits[:120], labels[:120])
    metric.update(logits[120:], labels[120:])
    assert metric.compute().item() == pytest.approx(balanced_accuracy_score(labels, logits.argmax(1)))


def test_f1_of_positive_class_from_logits() -> None:
    logits = torch.tensor([0.3, -0.2, 2.0, -1.0, 0.1])
    target = torch.tensor([1.0, 1.0, 1.0, 0.0, 0.0])
    metric = LogitBinaryF1()
    metric.update(logits, target)
    assert metric.compute().item() == pytest.approx(f1_score(target, logits > 0))


def info(metric: str, task: str = "binary", outputs: int = 1) -> DatasetInfo:
    return DatasetInfo("toy", "link", task, outputs, metric, True, FeatureSpec("constant"), None)  # type: ignore[arg-type]


def test_registry_maps_node_and_link_names_to_metrics() -> None:
    assert isinstance(make_metric(info("weighted_accuracy", "multiclass", 6)), WeightedAccuracy)
    assert isinstance(make_metric(info("f1")), LogitBinaryF1)
    hits = make_metric(info("hits@20"))
    assert isinstance(hits, HitsAtK) and hits.k == 20
    ranking = make_metric(info("mrr_ext_filtered"))
    assert isinstance(ranking, LinkRankingMetric) and ranking.monitor == "mrr_ext_filtered"
    with pytest.raises(ValueError, match="'weighted_accuracy' is not defined for task type 'binary'"):
        make_metric(info("weighted_accuracy", "binary"))
