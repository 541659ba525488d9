"""The ``memorization`` task (``python run.py task=memorization``): NCMemo's label-memorization
score of every node, as :mod:`graphbench.analysis.memorization` defines it, from models trained on the
shared + candidate and shared + independent node sets."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig
from torch import Tensor
from torch_geometric.utils import degree, to_undirected

from graphbench.analysis.label_disagreement import label_disagreement
from graphbench.analysis.memorization import (
    CSV_FILENAME,
    HISTOGRAM_FILENAME,
    SETS,
    MemorizationProtocol,
    accuracy,
    check_fractions,
    log_image,
    mean_or_none,
    memorization_rate,
    memorization_scores,
    memorization_sets,
    plot_title,
    true_label_probability,
    write_csv,
)
from graphbench.analysis.subset_training import node_datamodule, train_on_nodes
from graphbench.build import open_loggers, sized_network
from graphbench.run.checkpoints import CHECKPOINTS
from graphbench.run.errors import ConfigError
from graphbench.run.frame import RunFrame, record_raw_files, recorded_run
from graphbench.run.record import RunRecord

log = logging.getLogger(__name__)


def run_memorization(
    cfg: DictConfig,
    *,
    tau: float = 0.5,
    num_seeds: int = 3,
    split_fractions: Any = (0.6, 0.2, 0.2),
    subset_fractions: Any = (0.5, 0.25, 0.25),
    stratified: bool = True,
    knn_k: int = 3,
    checkpoint: str = "best",
    plots: bool = True,
    overrides: Sequence[str] = (),
) -> RunRecord:
    """The ``task=memorization`` entry point (``conf/task/memorization.yaml``); returns the run's record,
    which is also in ``<paths.output_dir>/results.json``. The node split is drawn with ``cfg.seed``; the
    models of replicate ``cfg.seed`` use the seeds ``cfg.seed * num_seeds + i``, ``i < num_seeds``.
    ``overrides``: Hydra's task overrides, recorded in the run's provenance."""
    if checkpoint not in CHECKPOINTS:
        raise ConfigError(f"task.checkpoint={checkpoint!r} is not valid; valid: {list(CHECKPOINTS)}")
    if isinstance(num_seeds, bool) or not isinstance(num_seeds, int) or num_seeds < 1:
        raise ConfigError(f"task.num_seeds must be a positive integer, got {num_seeds!r}")
    if not isinstance(tau, (int, float)) or isinstance(tau, bool):
        raise ConfigError(f"task.tau must be a number, got {tau!r}")

    protocol = MemorizationProtocol(
        float(tau),
        num_seeds,
        check_fractions(split_fractions, "split_fractions"),
        check_fractions(subset_fractions, "subset_fractions"),
        bool(stratified),
        knn_k,
        checkpoint,
        bool(plots),
    )

    def body(cfg: DictConfig, record: RunRecord, frame: RunFrame) -> None:
        _memorization(cfg, record, frame.output_dir, frame.loggers, protocol)

    return recorded_run(cfg, body, overrides=overrides)


def _memorization(
    cfg: DictConfig,
    record: RunRecord,
    output_dir: Path,
    loggers: list[Any],
    protocol: MemorizationProtocol,
) -> None:
    tau, num_seeds, knn_k = protocol.tau, protocol.num_seeds, protocol.knn_k
    datamodule = node_datamodule(cfg)
    record_raw_files(record, datamodule)
    graph = datamodule.graph
    assert graph is not None
    labels = graph.y.view(-1).long()
    n = labels.numel()
    sets = memorization_sets(labels, protocol.split_fractions, protocol.subset_fractions, int(cfg.seed), protocol.stratified)
    open_loggers(cfg, record, loggers)
    sized = sized_network(cfg, datamodule.info)
    record.hidden_dim, record.num_params = sized.hidden_dim, sized.num_params
    log.info(
        "memorization: |S_S|=%d |S_C|=%d |S_I|=%d, control %d test nodes, %d val nodes, %d seeds per model",
        len(sets.shared),
        len(sets.candidate),
        len(sets.independent),
        len(sets.control),
        len(sets.val),
        num_seeds,
    )

    def mask(*parts: Tensor) -> Tensor:
        out = torch.zeros(n, dtype=torch.bool, device=labels.device)
        for part in parts:
            out[part] = True
        return out

    val_mask = mask(sets.val)
    probs: dict[str, list[Tensor]] = {"f": [], "g": []}
    for i in range(num_seeds):
        seed = int(cfg.seed) * num_seeds + i
        for name, train_nodes in (("f", mask(sets.shared, sets.candidate)), ("g", mask(sets.shared, sets.independent))):
            log.info("training model %s, seed %d (%d nodes)", name, seed, int(train_nodes.sum()))
            probs[name].append(
                train_on_nodes(
                    cfg, train_nodes, val_mask, seed, output_dir / f"model_{name}_seed{seed}", datamodule, protocol.checkpoint
                )
            )
    probs_f, probs_g = torch.stack(probs["f"]), torch.stack(probs["g"])
    mem = memorization_scores(probs_f, probs_g, labels)
    p_f = true_label_probability(probs_f, labels).mean(dim=0)
    p_g = true_label_probability(probs_g, labels).mean(dim=0)

    reference = torch.cat([sets.shared, sets.candidate])
    undirected = to_undirected(graph.edge_index, num_nodes=n)
    node_degree = degree(undirected[0], num_nodes=n).long()
    rows: list[dict[str, Any]] = []
    lds_of: dict[str, Tensor] = {}
    for name in SETS:
        nodes = sets.of(name)
        lds_of[name] = label_disagreement(graph.x, labels, nodes, reference, knn_k)
        for j, v in enumerate(nodes.tolist()):
            rows.append(
                {
                    "node": v,
                    "set": name,
                    "label": int(labels[v]),
                    "mem": float(mem[v]),
                    "degree": int(node_degree[v]),
                    "LDS": float(lds_of[name][j]),
                    "p_f": float(p_f[v]),
                    "p_g": float(p_g[v]),
                }
            )
    write_csv(output_dir / CSV_FILENAME, rows)

    candidate_mem = mem[sets.candidate]
    memorized = candidate_mem > tau
    metrics: dict[str, float | None] = {
        "memorization/rate": memorization_rate(candidate_mem, tau),
        "memorization/rate_control": memorization_rate(mem[sets.control], tau),
        "lds/candidate_memorized": mean_or_none(lds_of["candidate"][memorized]),
        "lds/candidate_not_memorized": mean_or_none(lds_of["candidate"][~memorized]),
    }
    for name in SETS:
        metrics[f"memorization/mean_{name}"] = mean_or_none(mem[sets.of(name)])
    for name, stacked in (("f", probs_f), ("g", probs_g)):
        per_seed = torch.tensor([accuracy(p, labels, sets.test) for p in stacked])
        metrics[f"test/accuracy_{name}"] = float(per_seed.mean())
        metrics[f"test/accuracy_{name}_std"] = float(per_seed.std(unbiased=False))
        metrics[f"val/accuracy_{name}"] = float(torch.tensor([accuracy(p, labels, sets.val) for p in stacked]).mean())
    record.metrics = metrics
    record.monitor, record.metric, record.higher_is_better = "memorization/rate", "memorization_rate", False
    record.score = "memorization/rate"
    log.info(
        "memorization rate (tau=%g): candidates %.1f%%, control %.1f%%; test accuracy f %.4f, g %.4f",
        tau,
        100 * metrics["memorization/rate"],  # type: ignore[operator]
        100 * metrics["memorization/rate_control"],  # type: ignore[operator]
        metrics["test/accuracy_f"],
        metrics["test/accuracy_g"],
    )
    for lg in loggers:
        lg.log_metrics({k: v for k, v in metrics.items() if v is not None})
    if protocol.plots:
        from graphbench.analysis.memorization_plots import plot_histogram

        scores = {name: [r["mem"] for r in rows if r["set"] == name] for name in SETS}
        path = plot_histogram(scores, tau, output_dir / HISTOGRAM_FILENAME, title=plot_title(cfg))
        log_image(loggers, "memorization/histogram", path)
