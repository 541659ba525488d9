"""``WeightedAccuracy``: the mean over classes of the per-class recall (balanced accuracy)."""

from __future__ import annotations

import pytest
import torch
from sklearn.metrics import balanced_accuracy_score

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
