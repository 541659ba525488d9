"""OGB-style task-wise AP / ROC-AUC metrics: parity with ogb's Evaluator, undefined without both classes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from ogb.graphproppred import Evaluator

from graphbench.metrics.taskwise import OGBROCAUC, OGBAveragePrecision


def ogb_ap(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """OGB's own AP code path (the molpcba evaluator), sized to the number of tasks given."""
    evaluator = Evaluator("ogbg-molpcba")
    evaluator.num_tasks = y_true.shape[1]
    return float(evaluator.eval({"y_true": y_true, "y_pred": y_pred})["ap"])


def test_ap_matches_ogb_evaluator_on_random_predictions() -> None:
    rng = np.random.default_rng(0)
    y_true = (rng.random((300, 10)) < 0.3).astype(np.float64)
    y_true[rng.random((300, 10)) < 0.1] = np.nan  # unlabelled entries
    y_true[:, 3] = 0.0  # a task with a single class is skipped by OGB
    y_pred = rng.normal(size=(300, 10))
    y_pred[:50, 0] = 1.0  # ties
    metric = OGBAveragePrecision()
    for chunk in np.array_split(np.arange(300), 7):  # accumulated over mini-batches
        metric.update(torch.from_numpy(y_pred[chunk]).float(), torch.from_numpy(y_true[chunk]).float())
    assert metric.compute().item() == pytest.approx(ogb_ap(y_true, y_pred.astype(np.float32)), abs=1e-6)


def test_rocauc_matches_ogb_evaluator() -> None:
    rng = np.random.default_rng(1)
    y_true = (rng.random((200, 1)) < 0.4).astype(np.float64)
    y_pred = rng.normal(size=(200, 1))
    metric = OGBROCAUC()
    metric.update(torch.from_numpy(y_pred).float(), torch.from_numpy(y_true).float())
    expected = Evaluator("ogbg-molhiv").eval({"y_true": y_true, "y_pred": y_pred.astype(np.float32)})["rocauc"]
    assert metric.compute().item() == pytest.approx(expected, abs=1e-6)


def test_metric_undefined_without_both_classes() -> None:
    metric = OGBAveragePrecision()
    metric.update(torch.randn(5, 2), torch.zeros(5, 2))
    with pytest.raises(RuntimeError, match="both positive and negative"):
        metric.compute()
