"""The table at the end of ``scripts/gpu_check.sh``: one row per run directory, from its ``results.json``.

    python scripts/gpu_check_table.py <run dir> [<run dir> ...]

Columns: the run (its directory's name), status, epochs trained, seconds per epoch
(``time_per_epoch_s``), the test metric at the best validation epoch (``test/<metric>``), peak
memory (``peak_memory_mb``: the GPU's peak allocation on CUDA, RSS on CPU; graphbench.run.record) and the
run's total seconds. A directory without a readable ``results.json`` gets a row that says so.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HEADER = ("run", "status", "epochs", "s / epoch", "test metric", "peak memory", "total")


def _number(value: Any, spec: str, unit: str = "") -> str:
    return "—" if value is None else f"{value:{spec}}{unit}"


def row(run_dir: Path) -> tuple[str, ...]:
    """The table row of one run directory."""
    path = run_dir / "results.json"
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        reason = "no results.json" if isinstance(exc, FileNotFoundError) else f"unreadable results.json ({exc})"
        return (run_dir.name, reason, "—", "—", "—", "—", "—")
    metric = record.get("metric")
    value = (record.get("metrics") or {}).get(f"test/{metric}") if metric else None
    return (
        run_dir.name,
        str(record.get("status", "—")),
        _number(record.get("epochs_trained"), "d"),
        _number(record.get("time_per_epoch_s"), ".2f", " s"),
        f"{metric} {value:.4f}" if value is not None else "—",
        _number(record.get("peak_memory_mb"), ",.0f", " MiB"),
        _number(record.get("total_time_s"), ".0f", " s"),
    )


def table(run_dirs: Sequence[Path]) -> str:
    """The markdown table of ``run_dirs``, in the order given."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(row(run_dir)) + " |" for run_dir in run_dirs]
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    if not argv:
        print("usage: python scripts/gpu_check_table.py <run dir> [<run dir> ...]", file=sys.stderr)
        return 2
    print(table([Path(arg) for arg in argv]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
