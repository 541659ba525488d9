"""IGB's evaluation protocols as run tasks (``python run.py task=<name> ...``; Li et al., IJCAI 2022):

* ``task=igb`` (:func:`igb`): on the dataset's split (``dataset.split=igb`` for IGB's
  labeled : unlabeled = 1 : 4, labeled half train, half validation), select the number of epochs on
  train / validation, retrain on all labeled nodes for exactly that many epochs without early
  stopping, and test the final model on the unlabeled nodes.
* ``task=iid_eval`` (:func:`iid_eval`): the same protocol on each of ``num_subgraphs`` i.i.d.
  random-walk subgraphs (:mod:`~graphbench.analysis.igb.sampler`), reporting mean ± std.

Both write ``results.json`` with a truthful ``status`` on every exit path, like
:func:`graphbench.train.train`, and never raise for a run that went wrong.
"""

from __future__ import annotations

import csv
import logging
import statistics
from collections.abc import Sequence
from pathlib import Path

from omegaconf import DictConfig

from graphbench.analysis.igb.fit import FitResult, FullBatchRecipe, fit, igb_fit
from graphbench.analysis.igb.sampler import overlap_and_coverage, sample_subgraphs, subgraph_data
from graphbench.analysis.igb.walk import UndirectedGraph
from graphbench.analysis.subset_training import node_datamodule
from graphbench.modules.network import count_parameters
from graphbench.record import RunRecord
from graphbench.run_frame import RunFrame, record_raw_files, recorded_run

log = logging.getLogger(__name__)

#: one row per subgraph, in the run directory
IID_CSV: str = "iid_eval.csv"


def describe_model(record: RunRecord, recipe: FullBatchRecipe) -> None:
    record.num_params = count_parameters(recipe.make_network(recipe.hidden_dim))
    record.hidden_dim = recipe.hidden_dim
    record.monitor, record.metric, record.higher_is_better = "val/accuracy", "accuracy", True


def igb(cfg: DictConfig, overrides: Sequence[str] = ()) -> RunRecord:
    """``task=igb``: IGB's select-then-retrain protocol on the dataset's own split.

    ``results.json`` metrics: ``test/accuracy`` of the retrained model; ``val/accuracy`` and
    ``train/accuracy`` of the selection fit at its best validation epoch; ``selection/test_accuracy``:
    the selection fit's test accuracy (the number without retraining). ``best_epoch`` is the selected
    number of epochs, ``epochs_trained`` the retraining's. ``overrides``: Hydra's, for the provenance."""

    def body(cfg: DictConfig, record: RunRecord, frame: RunFrame) -> None:
        datamodule = node_datamodule(cfg)
        record_raw_files(record, datamodule)
        recipe = FullBatchRecipe.from_config(cfg, datamodule.info)
        describe_model(record, recipe)
        assert datamodule.graph is not None
        selection, final = igb_fit(recipe, datamodule.graph, int(cfg.seed))
        record.best_epoch, record.epochs_trained = selection.epochs, final.epochs
        record.metrics = {
            "train/accuracy": selection.train,
            "val/accuracy": selection.val,
            "test/accuracy": final.test,
            "selection/test_accuracy": selection.test,
        }
        log.info("igb: selected %d epochs (val %.4f); retrained test accuracy %.4f", selection.epochs, selection.val, final.test)

    return recorded_run(cfg, body, overrides=overrides)


def iid_eval(
    cfg: DictConfig,
    *,
    num_subgraphs: int = 100,
    num_edges: int = 1000,
    burn_in: int = 5,
    accept_exponent: float = 5.0,
    sample_seed: int = 0,
    retrain: bool = True,
    overrides: Sequence[str] = (),
) -> RunRecord:
    """``task=iid_eval``: train and evaluate the configured model on each of ``num_subgraphs`` i.i.d.
    subgraphs of the dataset's graph (drawn with ``sample_seed``, so every model and every ``seed``
    sees the same subgraphs; ``seed`` seeds the weights), each split 10 / 10 / 80.

    With ``retrain`` (IGB's protocol) each subgraph's model selects its epochs on train / validation
    and is retrained on train + validation for that many epochs before the test; without, the
    best-validation model is tested. ``results.json`` metrics: ``test/accuracy`` (mean over the
    subgraphs), ``test/accuracy_std`` (sample std), ``val/accuracy`` and ``train/accuracy`` (means
    of the selection fits), and ``iid/*``: ``num_subgraphs``, ``overlap`` (mean pairwise Jaccard of
    the node sets), ``coverage`` (share of the graph's nodes in any subgraph), ``mean_nodes``,
    ``mean_node_kl``, ``mean_edge_kl``, ``acceptance_rate``; ``best_epoch``: the median selected
    epoch. ``iid_eval.csv`` holds one row per subgraph. ``overrides``: Hydra's, for the provenance."""

    def body(cfg: DictConfig, record: RunRecord, frame: RunFrame) -> None:
        output_dir = frame.output_dir
        datamodule = node_datamodule(cfg)
        record_raw_files(record, datamodule)
        info = datamodule.info
        recipe = FullBatchRecipe.from_config(cfg, info)
        describe_model(record, recipe)
        graph = datamodule.graph
        assert graph is not None
        num_nodes = int(graph.num_nodes)
        samples, stats = sample_subgraphs(
            graph.edge_index,
            graph.y,
            num_nodes,
            info.num_outputs,
            num_subgraphs=int(num_subgraphs),
            num_edges=int(num_edges),
            burn_in=int(burn_in),
            accept_exponent=float(accept_exponent),
            seed=int(sample_seed),
        )
        overlap, coverage = overlap_and_coverage([s.nodes for s in samples], num_nodes)
        log.info("iid_eval: %d subgraphs, overlap %.3f, coverage %.3f", len(samples), overlap, coverage)
        undirected = UndirectedGraph.from_edge_index(graph.edge_index, num_nodes)
        rows: list[dict[str, float | int]] = []
        for index, sample in enumerate(samples):
            data = subgraph_data(graph, undirected, sample)
            selection: FitResult
            if retrain:
                selection, final = igb_fit(recipe, data, int(cfg.seed))
            else:
                selection = final = fit(recipe, data, int(cfg.seed), select=True)
            rows.append(
                {
                    "subgraph": index,
                    "nodes": len(sample.nodes),
                    "edges": len(sample.edge_ids),
                    "node_kl": sample.node_kl,
                    "edge_kl": sample.edge_kl,
                    "selected_epochs": selection.epochs,
                    "train_accuracy": selection.train,
                    "val_accuracy": selection.val,
                    "test_accuracy": final.test,
                }
            )
        _write_rows(output_dir / IID_CSV, rows)
        tests = [float(r["test_accuracy"]) for r in rows]
        record.best_epoch = int(statistics.median_low([int(r["selected_epochs"]) for r in rows]))
        record.epochs_trained = recipe.max_epochs
        record.metrics = {
            "train/accuracy": statistics.fmean(float(r["train_accuracy"]) for r in rows),
            "val/accuracy": statistics.fmean(float(r["val_accuracy"]) for r in rows),
            "test/accuracy": statistics.fmean(tests),
            "test/accuracy_std": statistics.stdev(tests) if len(tests) > 1 else float("nan"),
            "iid/num_subgraphs": float(len(samples)),
            "iid/overlap": overlap,
            "iid/coverage": coverage,
            "iid/mean_nodes": statistics.fmean(float(r["nodes"]) for r in rows),
            "iid/mean_node_kl": statistics.fmean(s.node_kl for s in samples),
            "iid/mean_edge_kl": statistics.fmean(s.edge_kl for s in samples),
            "iid/acceptance_rate": stats.accepted / stats.proposed,
        }
        log.info(
            "iid_eval: test accuracy %.4f ± %.4f over %d subgraphs",
            record.metrics["test/accuracy"],
            record.metrics["test/accuracy_std"],
            len(rows),
        )

    return recorded_run(cfg, body, overrides=overrides)


def _write_rows(path: Path, rows: list[dict[str, float | int]]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
