from __future__ import annotations

import math

import pytest
import torch

from graphbench.metrics.log_mse import LogMSE


def test_mean_over_tasks_of_log10_mse_accumulated_over_batches() -> None:
    metric = LogMSE(num_tasks=2)
    metric.update(torch.tensor([[1.0, 0.0], [0.0, 0.0]]), torch.tensor([[0.0, 0.0], [0.0, 0.1]]))
    metric.update(torch.tensor([[0.0, 0.1]]), torch.tensor([[1.0, 0.1]]))
    # task 0: squared errors 1, 0, 1 -> MSE 2/3; task 1: 0, 0.01, 0 -> MSE 0.01/3
    expected = (math.log10(2 / 3) + math.log10(0.01 / 3)) / 2
    assert metric.compute().item() == pytest.approx(expected, rel=1e-5)
    metric.reset()
    metric.update(torch.tensor([[0.1, 0.1]]), torch.tensor([[0.0, 0.0]]))
    assert metric.compute().item() == pytest.approx(-2.0, rel=1e-5)


def test_rejects_the_wrong_number_of_tasks() -> None:
    with pytest.raises(ValueError, match="expects 3 tasks"):
        LogMSE(num_tasks=3).update(torch.zeros(4, 2), torch.zeros(4, 2))
