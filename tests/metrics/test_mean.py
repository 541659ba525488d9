"""WeightedMean: the batch-size-weighted epoch mean, NaN kept, exact on hand-made values."""

from __future__ import annotations

import math

import torch

from graphbench.metrics.mean import WeightedMean


def test_batches_count_by_their_weight() -> None:
    mean = WeightedMean()
    mean.update(torch.tensor(1.0), 1)
    mean.update(torch.tensor(3.0), 3)
    assert mean.compute().item() == 2.5  # (1*1 + 3*3) / 4; an unweighted mean would give 2.0


def test_a_tensor_weight_and_the_default_weight() -> None:
    mean = WeightedMean()
    mean.update(torch.tensor(2.0), torch.tensor(2.0))
    mean.update(torch.tensor(5.0))
    assert mean.compute().item() == 3.0  # (2*2 + 5*1) / 3


def test_a_nan_batch_makes_the_mean_nan_and_reset_clears_it() -> None:
    mean = WeightedMean()
    mean.update(torch.tensor(1.0), 4)
    mean.update(torch.tensor(float("nan")), 1)
    assert math.isnan(mean.compute().item())
    mean.reset()
    mean.update(torch.tensor(0.5), 2)
    assert mean.compute().item() == 0.5
