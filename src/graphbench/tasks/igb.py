"""IGB's evaluation protocols as run tasks (``python run.py task=<name> ...``; Li et al., IJCAI 2022):

* ``task=igb`` (:func:`igb`): on the dataset's split (``dataset.split=igb`` for IGB's
  labeled : unlabeled = 1 : 4, labeled half train, half validation), choose the setting of
  ``task.grid`` (hidden width, dropout, learning rate, weight decay) and the number of epochs on
  train / validation (protocol step 2, :func:`~graphbench.analysis.igb.fit.grid_search`), retrain
  with them on all labeled nodes for exactly that many epochs without early stopping, and test the
  final model on the unlabeled nodes.
* ``task=iid_eval`` (:func:`iid_eval`): the same protocol on each of ``num_subgraphs`` i.i.d.
  random-walk subgraphs (:mod:`~graphbench.analysis.igb.protocol`), reporting mean ± std.

Both write ``results.json`` with a truthful ``status`` on every exit path, like
:func:`graphbench.tasks.train.train`, and never raise for a run that went wrong.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from omegaconf import DictConfig

from graphbench.analysis.igb.fit import FullBatchRecipe, grid_metrics
from graphbench.analysis.igb.protocol import SubgraphSampling, iid_evaluation, search_and_retrain, write_rows
from graphbench.analysis.subset_training import node_datamodule
from graphbench.modules.network import count_parameters
from graphbench.run.frame import completed_run, record_raw_files, run_frame
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

    if (done := completed_run(cfg)) is not None:  # resume=auto skips a completed run
        return done
    with run_frame(cfg, overrides) as frame:
        record = frame.record
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
    return frame.record


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

    Protocol step 2 on all the subgraphs at once, the setting chosen on their mean validation accuracy
    (:func:`~graphbench.analysis.igb.protocol.iid_evaluation`); with ``retrain`` each subgraph's model is
    retrained with it on train + validation for its own selected epochs before the test; without, the
    best-validation model is tested. Cost: ``|grid| * num_subgraphs`` fits, plus the retrains.
    ``results.json`` metrics: ``test/accuracy`` (mean over the
    subgraphs), ``test/accuracy_std`` (sample std), ``val/accuracy`` and ``train/accuracy`` (means
    of the selection fits), and ``iid/*``: ``num_subgraphs``, ``overlap`` (mean pairwise Jaccard of
    the node sets), ``coverage`` (share of the graph's nodes in any subgraph), ``mean_nodes``,
    ``mean_node_kl``, ``mean_edge_kl``, ``acceptance_rate``; ``grid/*``: the chosen setting;
    ``best_epoch``: the median selected epoch, from 0 (:func:`last_epoch`). ``iid_eval.csv`` holds one
    row per subgraph. ``overrides``: Hydra's, for the provenance."""
    sampling = SubgraphSampling(num_subgraphs, num_edges, burn_in, accept_exponent, sample_seed)

    if (done := completed_run(cfg)) is not None:  # resume=auto skips a completed run
        return done
    with run_frame(cfg, overrides) as frame:
        record = frame.record
        datamodule = node_datamodule(cfg)
        record_raw_files(record, datamodule)
        assert datamodule.graph is not None
        evaluation = iid_evaluation(cfg, datamodule.graph, datamodule.info, grid, sampling, retrained=retrain)
        describe_model(record, evaluation.choice.recipe)
        write_rows(frame.output_dir / IID_CSV, evaluation.rows())
        record.best_epoch = last_epoch(evaluation.median_selected_epochs)
        record.epochs_trained = evaluation.choice.recipe.max_epochs
        record.metrics = evaluation.metrics()
        log.info(
            "iid_eval: test accuracy %.4f ± %.4f over %d subgraphs",
            record.metrics["test/accuracy"],
            record.metrics["test/accuracy_std"],
            len(evaluation.samples),
        )
    return frame.record
