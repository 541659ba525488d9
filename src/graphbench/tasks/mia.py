"""The ``mia`` task (``python run.py task=mia``): LiRA membership inference against shadow models, as
:mod:`graphbench.analysis.mia` defines it."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig
from torch_geometric.utils import degree, index_to_mask, to_undirected

from graphbench.analysis.mia import (
    CONFIDENCES_FILE,
    NODE_CSV,
    leave_one_out_scores,
    logit_confidence,
    roc_summary,
    shadow_membership,
    write_node_csv,
)
from graphbench.analysis.subset_training import node_datamodule, train_on_nodes
from graphbench.build.loggers import open_loggers
from graphbench.build.model import sized_network
from graphbench.run.frame import completed_run, record_raw_files, run_frame
from graphbench.run.record import RunRecord
from graphbench.vocabulary.splits import SPLITS

log = logging.getLogger(__name__)


def mia(
    cfg: DictConfig,
    *,
    num_shadows: int = 16,
    global_variance: bool = False,
    checkpoint: str = "best",
    overrides: Sequence[str] = (),
) -> RunRecord:
    """The ``mia`` task (``python run.py task=mia``): LiRA against the configured model on the configured
    one-graph dataset, as the module docstring describes. Shadow model ``k`` trains with seed
    ``cfg.seed + k`` under ``<run dir>/shadows/<k>/``; membership is drawn with ``cfg.seed``. Every model
    predicts with its ``checkpoint`` weights: ``best`` (validation) or ``last`` (epoch).

    Writes ``results.json`` (metrics ``mia_auc``, ``mia_tpr_at_1pct_fpr`` and their ``mia_offline_*``
    counterparts, and ``{train,val,test}/accuracy``: the shadows' mean accuracy on their own training
    nodes, the validation nodes and the never-trained test nodes), ``mia.csv`` (:func:`write_node_csv`)
    and ``mia_confidences.pt`` (pool nodes, membership, confidences). Like :func:`graphbench.tasks.train.train`
    it never raises for a run that went wrong: the record's ``status`` says what happened. ``overrides``:
    Hydra's task overrides, recorded in the run's provenance."""

    if (done := completed_run(cfg)) is not None:  # resume=auto skips a completed run
        return done
    with run_frame(cfg, overrides) as frame:
        record = frame.record
        _attack(cfg, record, frame.output_dir, frame.loggers, num_shadows, global_variance, checkpoint)
    return frame.record


def _attack(
    cfg: DictConfig,
    record: RunRecord,
    output_dir: Path,
    loggers: list[Any],
    num_shadows: int,
    global_variance: bool,
    checkpoint: str,
) -> None:
    datamodule = node_datamodule(cfg)
    record_raw_files(record, datamodule)
    graph = datamodule.graph
    assert graph is not None
    pool = graph.train_mask.nonzero().view(-1)
    val_mask, test_mask = graph.val_mask.clone(), graph.test_mask.clone()
    keep = shadow_membership(num_shadows, pool.numel(), int(cfg.seed))
    open_loggers(cfg, record, loggers)
    sized = sized_network(cfg, datamodule.info)
    record.hidden_dim, record.num_params = sized.hidden_dim, sized.num_params
    record.monitor, record.metric, record.higher_is_better = "mia_auc", "auc", True
    record.score = "mia_auc"
    log.info("LiRA: %d shadow models, candidate pool of %d training nodes", num_shadows, pool.numel())

    probs, accuracy = [], {split: [] for split in SPLITS}
    for k in range(num_shadows):
        train_mask = index_to_mask(pool[keep[k]], graph.num_nodes)
        shadow_dir = output_dir / "shadows" / str(k)
        p = train_on_nodes(cfg, train_mask, val_mask, int(cfg.seed) + k, shadow_dir, datamodule=datamodule, checkpoint=checkpoint)
        correct = p.argmax(dim=-1) == graph.y
        for split, mask in zip(SPLITS, (train_mask, val_mask, test_mask)):
            accuracy[split].append(float(correct[mask].float().mean()))
        log.info("shadow %d/%d: test accuracy %.4f", k + 1, num_shadows, accuracy["test"][-1])
        probs.append(p[pool])
    phi = logit_confidence(torch.stack(probs), graph.y[pool])
    online = leave_one_out_scores(phi, keep, global_variance)
    offline = leave_one_out_scores(phi, keep, global_variance, offline=True)
    metrics: dict[str, float | None] = {f"{split}/accuracy": sum(v) / len(v) for split, v in accuracy.items()}
    for prefix, scores in (("mia", online), ("mia_offline", offline)):
        summary = roc_summary(scores, keep)
        metrics[f"{prefix}_auc"] = summary["auc"]
        metrics[f"{prefix}_tpr_at_1pct_fpr"] = summary["tpr_at_low_fpr"]
    record.metrics = metrics
    log.info(
        "LiRA: AUC %.4f, TPR %.4f at 1%% FPR (offline: AUC %.4f, TPR %.4f)",
        *(metrics[f"{prefix}_{name}"] for prefix in ("mia", "mia_offline") for name in ("auc", "tpr_at_1pct_fpr")),
    )
    for lg in loggers:
        lg.log_metrics({k: v for k, v in metrics.items() if v is not None})
    degrees = degree(to_undirected(graph.edge_index, num_nodes=graph.num_nodes)[0], graph.num_nodes).long()
    write_node_csv(output_dir / NODE_CSV, pool, graph.y[pool], degrees[pool], phi, keep, online)
    torch.save({"nodes": pool, "keep": keep, "phi": phi, "score": online}, output_dir / CONFIDENCES_FILE)
