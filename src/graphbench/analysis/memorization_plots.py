"""Plots and multirun tables of ``task=memorization`` (matplotlib, Agg backend: no display needed).

- :func:`plot_histogram`: the memorization scores of each node set of one run (NCMemo Fig. 2 style).
- :func:`collect_runs` + :func:`plot_rate_vs_homophily`: the memorization rate of the candidate nodes
  (and of the control) against the edge homophily of each run's graph, across a multirun
  (``python -m graphbench.analysis memorization <multirun dir> --plot out.png``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from graphbench.run.record import RESULTS_FILENAME, RunRecord

#: colours of the node sets in the histograms
SET_COLOURS: dict[str, str] = {"shared": "tab:gray", "candidate": "tab:red", "independent": "tab:blue", "control": "tab:green"}


def plot_histogram(scores: Mapping[str, Sequence[float]], tau: float, path: Path, title: str = "") -> Path:
    """One histogram panel of memorization scores per node set (bins on [-1, 1]), the threshold ``tau``
    drawn as a line and the share above it in each panel's title; saved as a PNG at ``path``."""
    names = [name for name, values in scores.items() if len(values)]
    fig, axes = plt.subplots(1, max(len(names), 1), figsize=(3.2 * max(len(names), 1), 2.8), sharey=True, squeeze=False)
    bins = [i / 10 for i in range(-10, 11)]
    for ax, name in zip(axes[0], names):
        values = list(scores[name])
        share = sum(v > tau for v in values) / len(values)
        ax.hist(values, bins=bins, color=SET_COLOURS.get(name, "tab:purple"), alpha=0.85)
        ax.axvline(tau, color="black", linestyle="--", linewidth=1)
        ax.set_title(f"{name} (n={len(values)}): {100 * share:.1f}% > {tau:g}", fontsize=9)
        ax.set_xlabel("memorization score")
    axes[0][0].set_ylabel("nodes")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)


@dataclass(frozen=True)
class MemorizationRun:
    """The summary of one completed memorization run."""

    run_dir: str
    dataset: str
    model: str
    homophily: float | None  #: ``dataset.homophily`` when the dataset has it (syn-cora), else ``None``
    checkpoint: str  #: ``task.checkpoint``: the models' best-validation or last weights
    transform: str  #: the graph transform (``+transform=``) as ``name(key=value, ...)``, or ``""``
    seed: int
    rate: float | None
    rate_control: float | None
    accuracy_f: float | None
    accuracy_g: float | None


def collect_runs(root: Path) -> list[MemorizationRun]:
    """Every completed ``task=memorization`` run under ``root`` (any depth), sorted by dataset,
    homophily, model and seed; other runs and unreadable ``results.json`` files are skipped."""
    runs = []
    for path in sorted(Path(root).rglob(RESULTS_FILENAME)):
        try:
            record = RunRecord.read(path)
        except (OSError, ValueError, TypeError):
            continue
        config = record.config or {}
        task = config.get("task") or {}
        if not record.completed or task.get("name") != "memorization":
            continue
        dataset = config.get("dataset") or {}
        homophily = dataset.get("homophily")
        m = record.metrics
        runs.append(
            MemorizationRun(
                run_dir=str(path.parent),
                dataset=str(dataset.get("name")),
                model=str((config.get("model") or {}).get("name")),
                homophily=float(homophily) if homophily is not None else None,
                checkpoint=str(task.get("checkpoint", "best")),
                transform=_describe(config.get("transform")),
                seed=int(config.get("seed", 0)),
                rate=m.get("memorization/rate"),
                rate_control=m.get("memorization/rate_control"),
                accuracy_f=m.get("test/accuracy_f"),
                accuracy_g=m.get("test/accuracy_g"),
            )
        )
    return sorted(
        runs,
        key=lambda r: (r.dataset, r.homophily if r.homophily is not None else -1.0, r.model, r.checkpoint, r.transform, r.seed),
    )


def _describe(transform: object) -> str:
    if not isinstance(transform, dict):
        return ""
    arguments = ", ".join(f"{k}={v}" for k, v in transform.items() if k not in ("_target_", "name"))
    return f"{transform.get('name', 'transform')}({arguments})"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def runs_table(runs: Sequence[MemorizationRun], csv_format: bool = False) -> str:
    """One row per run: dataset, homophily, model, checkpoint, graph transform, seed, memorization rate on S_C and on the
    control (in %), and the mean test accuracy of the f and g models (in %)."""
    header = [
        "dataset",
        "homophily",
        "model",
        "checkpoint",
        "transform",
        "seed",
        "rate_candidate_%",
        "rate_control_%",
        "test_acc_f_%",
        "test_acc_g_%",
    ]
    rows = [
        [
            r.dataset,
            "" if r.homophily is None else f"{r.homophily:g}",
            r.model,
            r.checkpoint,
            r.transform,
            str(r.seed),
            _pct(r.rate),
            _pct(r.rate_control),
            _pct(r.accuracy_f),
            _pct(r.accuracy_g),
        ]
        for r in runs
    ]
    if csv_format:
        return "\n".join(",".join(row) for row in [header, *rows]) + "\n"
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def plot_rate_vs_homophily(runs: Sequence[MemorizationRun], path: Path) -> Path:
    """Memorization rate (%) of the candidates and of the control against edge homophily, one line
    per (dataset, model, checkpoint, transform), the mean over seeds at each homophily; runs without a homophily value are
    left out. Raises ``ValueError`` when no run has one."""
    points = [r for r in runs if r.homophily is not None and r.rate is not None]
    if not points:
        raise ValueError("no completed memorization run with a dataset.homophily value (e.g. dataset=syn-cora)")
    fig, ax = plt.subplots(figsize=(5, 3.6))
    for key in sorted({(r.dataset, r.model, r.checkpoint, r.transform) for r in points}):
        dataset, model, checkpoint, transform = key
        group = [r for r in points if (r.dataset, r.model, r.checkpoint, r.transform) == key]
        levels = sorted({r.homophily for r in group})  # type: ignore[type-var]
        for attr, style, label in (("rate", "o-", "candidates $S_C$"), ("rate_control", "s--", "control (test nodes)")):
            means = []
            for h in levels:
                values = [getattr(r, attr) for r in group if r.homophily == h and getattr(r, attr) is not None]
                means.append(100 * sum(values) / len(values) if values else float("nan"))
            where = f"{dataset} + {transform}" if transform else dataset
            ax.plot(levels, means, style, label=f"{model} ({checkpoint} weights) on {where}: {label}")
    ax.set_xlabel("edge homophily")
    ax.set_ylabel("memorization rate (%)")
    ax.grid(True, linestyle=":", alpha=0.5)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)
