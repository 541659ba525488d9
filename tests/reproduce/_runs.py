"""Fabricated run directories of a reproduced table, written through :class:`~graphbench.run.record.RunRecord`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphbench.run.record import RESULTS_FILENAME, RunRecord


def write_result(
    path: Path,
    *,
    seed: int,
    status: str = "completed",
    metrics: dict[str, float] | None = None,
    recipe_card: dict[str, Any] | None = None,
) -> Path:
    """``path/results.json`` of a run with ``status`` and ``metrics`` (a completed accuracy run by default)."""
    path.mkdir(parents=True, exist_ok=True)
    config = {"seed": seed, "dataset": {"name": "cora"}, "model": {"name": "gcn"}, "recipe_card": recipe_card}
    record = RunRecord(
        status=status,
        config=config,
        run_dir=str(path),
        metric="accuracy",
        monitor="val/accuracy",
        higher_is_better=True,
        metrics=metrics if metrics is not None else {"test/accuracy": 0.8},
    )
    record.write(path / RESULTS_FILENAME)
    return path
