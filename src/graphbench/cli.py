"""What ``run.py`` does with a composed config: run the task, print its outcome."""
from __future__ import annotations

from typing import Any

from omegaconf import DictConfig

from graphbench.instantiate import METADATA_KEYS, build


def format_summary(results: dict[str, Any]) -> str:
    """A short human-readable summary of a finished run."""
    lines = [
        f"status: {results['status']}",
        f"parameters: {results['num_params']:,} (hidden_dim={results['hidden_dim']})",
        f"best epoch: {results['best_epoch']} of {results['epochs_trained']}",
    ]
    metrics = results["metrics"]
    for split in ("train", "val", "test"):
        values = ", ".join(f"{k} = {v:.4f}" for k, v in sorted(metrics.items()) if k.startswith(f"{split}/"))
        lines.append(f"{split}: {values}")
    if results.get("time_per_epoch_s") is not None:
        lines.append(f"time per epoch: {results['time_per_epoch_s']:.2f} s, peak memory: {results['peak_memory_mb']:.0f} MiB")
    return "\n".join(lines)


def run_task(cfg: DictConfig) -> dict[str, Any]:
    task = build(cfg.task, "task", METADATA_KEYS)
    results = task(cfg)
    print(format_summary(results), flush=True)
    return results
