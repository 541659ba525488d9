"""TestPredictions keeps exactly what ``test_step`` returned, sorted by dataset index, as float32 where the
model computed in half precision, and writes it to ``predictions.npz`` unchanged."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch

from graphbench.callbacks.predictions import TestPredictions

ONE_PROCESS = SimpleNamespace(world_size=1)


def run_test_epoch(callback: TestPredictions, outputs: list[Any]) -> None:
    """One test epoch whose batches returned ``outputs``, through the callback's Lightning hooks."""
    callback.on_test_epoch_start(ONE_PROCESS, None)  # type: ignore[arg-type]
    for batch_idx, output in enumerate(outputs):
        callback.on_test_batch_end(ONE_PROCESS, None, output, None, batch_idx)  # type: ignore[arg-type]
    callback.on_test_epoch_end(ONE_PROCESS, None)  # type: ignore[arg-type]


def batch(y_pred: list[list[float]], y_true: list[int], index: list[int], dtype: torch.dtype) -> dict[str, torch.Tensor]:
    return {
        "loss": torch.tensor(0.5),
        "y_pred": torch.tensor(y_pred, dtype=dtype),
        "y_true": torch.tensor(y_true),
        "index": torch.tensor(index),
    }


# every value exact in bfloat16 and float16, so widening to float32 keeps it exactly
BATCHES = [([[0.5, -1.25], [3.0, 0.125]], [1, 0], [4, 1]), ([[-2.0, 0.75], [0.0, 1.5], [6.0, -0.5]], [0, 1, 1], [0, 3, 2])]
SORTED = {
    "y_pred": [[-2.0, 0.75], [3.0, 0.125], [6.0, -0.5], [0.0, 1.5], [0.5, -1.25]],
    "y_true": [0, 0, 1, 1, 1],
    "index": [0, 1, 2, 3, 4],
}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_the_batches_predictions_are_kept_in_index_order_as_float32(dtype: torch.dtype, tmp_path: Path) -> None:
    callback = TestPredictions()
    run_test_epoch(callback, [batch(*b, dtype=dtype) for b in BATCHES])
    assert set(callback.predictions) == {"y_pred", "y_true", "index"}
    assert callback.predictions["y_pred"].dtype == torch.float32
    assert {k: v.tolist() for k, v in callback.predictions.items()} == SORTED

    callback.save(tmp_path / "predictions.npz")
    saved = np.load(tmp_path / "predictions.npz")
    assert sorted(saved.files) == ["index", "y_pred", "y_true"]
    assert saved["y_pred"].dtype == np.float32 and saved["y_true"].dtype == np.int64
    assert {k: saved[k].tolist() for k in saved.files} == SORTED


def test_outputs_without_predictions_are_ignored_and_a_new_test_epoch_starts_afresh() -> None:
    callback = TestPredictions()
    run_test_epoch(callback, [batch(*BATCHES[0], dtype=torch.float32)])
    not_predictions = [None, torch.tensor(0.25), {"y_pred": torch.ones(1, 2), "y_true": torch.ones(1)}]
    run_test_epoch(callback, [*not_predictions, batch(*BATCHES[1], dtype=torch.float32)])
    assert callback.predictions["index"].tolist() == [0, 2, 3]  # the second epoch's batch alone
    run_test_epoch(callback, not_predictions)
    assert callback.predictions == {}


def test_an_example_predicted_twice_is_an_error() -> None:
    repeated = batch([[1.0, 0.0]], [1], [4], dtype=torch.float32)
    with pytest.raises(RuntimeError, match=r"^the test predictions hold an example twice"):
        run_test_epoch(TestPredictions(), [batch(*BATCHES[0], dtype=torch.float32), repeated])
