"""IGB's evaluation protocols as run tasks (``python run.py task=<name> ...``; Li et al., IJCAI 2022):

* ``task=igb`` (:func:`igb`): on the dataset's split (``dataset.split=igb`` for IGB's
  labeled : unlabeled = 1 : 4, labeled half train, half validation), choose the setting of
  ``task.grid`` (hidden width, dropout, learning rate, weight decay) and the number of epochs on
  train / validation (protocol step 2, :func:`~graphbench.analysis.igb.fit.grid_search`), retrain
  with them on all labeled nodes for exactly that many epochs without early stopping, and test the
  final model on the unlabeled nodes.
* ``task=iid_eval`` (:func:`iid_eval`): the same protocol on each of ``num_subgraphs`` i.i.d.
  random-walk subgraphs (:mod:`~graphbench.analysis.igb.sampler`), reporting mean ± std.

Both write ``results.json`` with a truthful ``status`` on every exit path, like
:func:`graphbench.tasks.train.train`, and never raise for a run that went wrong.
"""

from __future__ import annotations

import csv
import logging
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig
from torch_geometric.data import Data

from graphbench.analysis.igb.fit import (
    FullBatchRecipe,
    GridChoice,
    grid_metrics,
    grid_points,
    grid_search,
    retrain,
    with_overrides,
)
from graphbench.analysis.igb.sampler import overlap_and_coverage, sample_subgraphs, subgraph_data
from graphbench.analysis.igb.walk import UndirectedGraph
from graphbench.analysis.subset_training import node_datamodule
from graphbench.data.info import DatasetInfo
from graphbench.modules.network import count_parameters
from graphbench.run.frame import RunFrame, record_raw_files, recorded_run
from graphbench.run.record import RunRecord

log = logging.getLogger(__name__)

#: one row per subgraph, in the run directory
IID_CSV: str = "iid_eval.csv"


def last_epoch(epochs: int) -> int:
    """The last epoch of a fit of ``epochs`` epochs, numbered from 0 as Lightning numbers a training run's
    epochs (``results.json``'s ``best_epoch`` of every task; ``best epoch: 15 of 20`` is the 16th of 20)."""
    return epochs - 1


def describe_model(record: RunRecord, recipe: FullBatchRecipe) -> None:
    record.num_params = count_parameters(recipe.make_network(recipe.hidden_dim))
    record.hidden_dim = recipe.hidden_dim
    record.monitor, record.metric, record.higher_is_better = "val/accuracy", "accuracy", True


def grid_recipes(cfg: DictConfig, info: DatasetInfo, grid: Any) -> tuple[list[dict[str, Any]], list[FullBatchRecipe]]:
    """The points of ``grid`` (:func:`~graphbench.analysis.igb.fit.grid_points`) and the recipe of each."""
    points = grid_points(grid)
    return points, [FullBatchRecipe.from_config(with_overrides(cfg, point), info) for point in points]


def search_and_retrain(
    cfg: DictConfig, info: DatasetInfo, grid: Any, graphs: list[Data], *, retrained: bool = True
) -> tuple[GridChoice, list[float]]:
    """Protocol step 2 on ``graphs``: the grid search, then (``retrained``) each graph's retrain with the
    chosen setting for its own selected epochs. Returns the choice and each graph's test accuracy."""
    points, recipes = grid_recipes(cfg, info, grid)
    choice = grid_search(points, recipes, graphs, int(cfg.seed))
    log.info("grid: %d points, chose %s (mean val accuracy %.4f)", len(points), choice.point, choice.mean_val[choice.index])
    if not retrained:
        return choice, [s.test for s in choice.selections]
    seed = int(cfg.seed)
    return choice, [retrain(choice.recipe, g, seed, s.epochs).test for g, s in zip(graphs, choice.selections, strict=True)]


def igb(cfg: DictConfig, *, grid: Any = None, overrides: Sequence[str] = ()) -> RunRecord:
    """``task=igb``: IGB's protocol on the dataset's own split: the grid search on train / validation
    (every point's best validation epoch kept), then the retrain on train + validation with the chosen
    setting for the chosen number of epochs.

    ``results.json`` metrics: ``test/accuracy`` of the retrained model; ``val/accuracy`` and
    ``train/accuracy`` of the chosen setting's selection fit at its best validation epoch;
    ``selection/test_accuracy``: that fit's test accuracy (the number without retraining); ``grid/*``:
    the chosen values (:func:`~graphbench.analysis.igb.fit.grid_metrics`). ``best_epoch`` is the selected
    epoch, numbered from 0 as Lightning numbers a training run's (:func:`last_epoch`), ``epochs_trained`` the
    retraining's number of epochs (the selected epoch is its last); ``hidden_dim`` the chosen width.
    ``overrides``: Hydra's, for the provenance."""

    def body(cfg: DictConfig, record: RunRecord, frame: RunFrame) -> None:
        datamodule = node_datamodule(cfg)
        record_raw_files(record, datamodule)
        assert datamodule.graph is not None
        choice, (test,) = search_and_retrain(cfg, datamodule.info, grid, [datamodule.graph])
        describe_model(record, choice.recipe)
        (selection,) = choice.selections
        record.best_epoch, record.epochs_trained = last_epoch(selection.epochs), selection.epochs
        record.metrics = {
            "train/accuracy": selection.train,
            "val/accuracy": selection.val,
            "test/accuracy": test,
            "selection/test_accuracy": selection.test,
            **grid_metrics(choice),
        }
        log.info("igb: selected %d epochs (val %.4f); retrained test accuracy %.4f", selection.epochs, selection.val, test)

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
    grid: Any = None,
    overrides: Sequence[str] = (),
) -> RunRecord:
    """``task=iid_eval``: train and evaluate the configured model on each of ``num_subgraphs`` i.i.d.
    subgraphs of the dataset's graph (drawn with ``sample_seed``, so every model and every ``seed``
    sees the same subgraphs; ``seed`` seeds the weights), each split 10 / 10 / 80.

    Protocol step 2 as the IGB code's ``main.py``: every setting of ``grid`` is fitted on every
    subgraph (train / validation, best validation epoch kept) and the one with the best validation
    accuracy averaged over the subgraphs is chosen; with ``retrain`` each subgraph's model is then
    retrained with it on train + validation for its own selected epochs before the test; without,
    the best-validation model is tested. Cost: ``|grid| * num_subgraphs`` fits, plus the retrains. ``results.json`` metrics: ``test/accuracy`` (mean over the
    subgraphs), ``test/accuracy_std`` (sample std), ``val/accuracy`` and ``train/accuracy`` (means
    of the selection fits), and ``iid/*``: ``num_subgraphs``, ``overlap`` (mean pairwise Jaccard of
    the node sets), ``coverage`` (share of the graph's nodes in any subgraph), ``mean_nodes``,
    ``mean_node_kl``, ``mean_edge_kl``, ``acceptance_rate``; ``grid/*``: the chosen setting;
    ``best_epoch``: the median selected epoch, from 0 (:func:`last_epoch`). ``iid_eval.csv`` holds one row per subgraph. ``overrides``: Hydra's, for the provenance."""

    def body(cfg: DictConfig, record: RunRecord, frame: RunFrame) -> None:
        output_dir = frame.output_dir
        datamodule = node_datamodule(cfg)
        record_raw_files(record, datamodule)
        info = datamodule.info
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
        graphs = [subgraph_data(graph, undirected, sample) for sample in samples]
        choice, tests = search_and_retrain(cfg, info, grid, graphs, retrained=retrain)
        recipe = choice.recipe
        describe_model(record, recipe)
        rows: list[dict[str, float | int]] = [
            {
                "subgraph": index,
                "nodes": len(sample.nodes),
                "edges": len(sample.edge_ids),
                "node_kl": sample.node_kl,
                "edge_kl": sample.edge_kl,
                "selected_epochs": selection.epochs,
                "train_accuracy": selection.train,
                "val_accuracy": selection.val,
                "test_accuracy": test,
            }
            for index, (sample, selection, test) in enumerate(zip(samples, choice.selections, tests, strict=True))
        ]
        _write_rows(output_dir / IID_CSV, rows)
        tests = [float(r["test_accuracy"]) for r in rows]
        record.best_epoch = last_epoch(int(statistics.median_low([int(r["selected_epochs"]) for r in rows])))
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
            **grid_metrics(choice),
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
