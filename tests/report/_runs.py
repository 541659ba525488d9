"""Fabricated run directories for the report tests, written through :class:`~graphbench.run.record.RunRecord`.

A run's config looks like a resolved training config of a dataset with folds: the fold is
``dataset.split_index``, interpolated into ``dataset.source.split_index``, and ``run_group``
spells the overrides (the fold among them) as ``run.py`` names jobs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphbench.run.record import RESULTS_FILENAME, RunRecord


def run_config(out: Path, dataset: str, model: str, seed: int, fold: int | None) -> dict[str, Any]:
    """A resolved config; ``fold=None`` for a dataset without ``split_index``."""
    folds = {} if fold is None else {"split_index": fold}
    data = {"name": dataset, "batch_size": 128, **folds, "source": {"name": dataset, **folds}}
    group = f"dataset={dataset},model={model}" + ("" if fold is None else f",dataset.split_index={fold}")
    return {
        "seed": seed,
        "run_group": group,
        "run_name": f"{group},seed={seed}",
        "dataset": data,
        "model": {"name": model, "num_layers": 4 if model == "gcn" else 2},
        "trainer": {"max_epochs": 2, "default_root_dir": str(out)},
        "paths": {"output_dir": str(out)},
    }


def write_run(
    out: Path,
    *,
    dataset: str,
    model: str,
    seed: int,
    test: float,
    fold: int | None = None,
    metric: str = "accuracy",
    higher_is_better: bool = True,
) -> Path:
    """Write ``out/results.json`` of a completed run with ``test/<metric> = test`` (and ``val`` alike)."""
    out.mkdir(parents=True, exist_ok=True)
    record = RunRecord(
        status="completed",
        config=run_config(out, dataset, model, seed, fold),
        run_dir=str(out),
        replicate_keys=["seed", "run_name"],
        num_params=1000,
        metric=metric,
        monitor=f"val/{metric}",
        higher_is_better=higher_is_better,
        best_epoch=1,
        epochs_trained=2,
        metrics={f"test/{metric}": test, f"val/{metric}": test},
        time_per_epoch_s=0.5,
    )
    record.write(out / RESULTS_FILENAME)
    return out


#: :func:`two_datasets`: test/accuracy on mutag (sage only there) and test/mae on zinc, per model.
MUTAG_ACCURACY: dict[str, float] = {"gcn": 0.9, "gin": 0.8, "mlp": 0.7, "sage": 0.6}
ZINC_MAE: dict[str, float] = {"gcn": 0.3, "gin": 0.2, "mlp": 0.5}


def two_datasets(root: Path) -> Path:
    """One seed per model on two datasets: :data:`MUTAG_ACCURACY` (higher is better), :data:`ZINC_MAE` (lower)."""
    for model, value in MUTAG_ACCURACY.items():
        write_run(root / f"mutag-{model}", dataset="mutag", model=model, seed=0, test=value)
    for model, value in ZINC_MAE.items():
        write_run(root / f"zinc-{model}", dataset="zinc", model=model, seed=0, test=value, metric="mae", higher_is_better=False)
    return root
