"""``LogitBinaryAccuracy``: positive where the logit is > 0, unlabelled (NaN) targets left out."""

from __future__ import annotations

import pytest
import torch

from graphbench.metrics.accuracy import LogitBinaryAccuracy


def test_accuracy_thresholds_logits_at_zero_and_skips_nan_targets() -> None:
    metric = LogitBinaryAccuracy()
    # labelled entries: 0.3>0 vs 1 (right), -0.2 vs 1 (wrong), 0.9 vs 0 (wrong), -4 vs 0 (right); NaN skipped
    preds = torch.tensor([[0.3, -0.2], [0.9, -4.0], [5.0, 5.0]])
    target = torch.tensor([[1.0, 1.0], [0.0, 0.0], [float("nan"), float("nan")]])
    metric.update(preds, target)
    assert metric.compute().item() == 0.5
    metric.update(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0]))  # accumulated over batches: 4 of 6
    assert metric.compute().item() == pytest.approx(4 / 6)
