"""``LogitBinaryF1``: F1 of the positive class, predictions thresholded at logit 0."""

from __future__ import annotations

import pytest
import torch
from sklearn.metrics import f1_score

from graphbench.metrics.f1 import LogitBinaryF1


def test_f1_of_positive_class_from_logits() -> None:
    logits = torch.tensor([0.3, -0.2, 2.0, -1.0, 0.1])
    target = torch.tensor([1.0, 1.0, 1.0, 0.0, 0.0])
    metric = LogitBinaryF1()
    metric.update(logits, target)
    assert metric.compute().item() == pytest.approx(f1_score(target, logits > 0))
