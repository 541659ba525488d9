r"""ValidUtil, IGB's over-tuning probe (Li et al., "Rethinking the Setting of Semi-supervised Learning
on Graphs", IJCAI 2022, Section 3 and the IGB code's ``valid_util_gene_labels.py``).

The pseudo-label :math:`\tilde y_v` of each validation node :math:`v \in V` is treated as one more
hyper-parameter "selected on validation accuracy": the model is trained on the training nodes plus
:math:`V` with the pseudo-labels as targets, and for one node after the other every class is tried
and the one giving the highest accuracy on :math:`V` (against the true labels) is kept; on a tie the
initial pseudo-label (the unchanged model's prediction) stays. Nothing about the model changes, yet
the tuned pseudo-labels leak :math:`V`'s labels into training and inflate the test accuracy: how far
is the probe's measure of what validation-set tuning can do. The IGB authors call it a "reduction to
absurdity", not a method.

Cost: ``1 + |V| * C + 2`` fits of ``iterations`` epochs each (:func:`~graphbench.analysis.igb.fit.fit`,
no early stopping), so ``num_val_nodes`` and ``iterations`` keep it CPU-sized.
"""

from __future__ import annotations

import csv
import logging
from collections.abc import Sequence

import torch
from omegaconf import DictConfig

from graphbench.analysis.igb.fit import FullBatchRecipe, fit
from graphbench.analysis.igb.tasks import describe_model
from graphbench.analysis.subset_training import node_datamodule
from graphbench.errors import ConfigError
from graphbench.record import RunRecord
from graphbench.run_frame import RunFrame, record_raw_files, recorded_run

log = logging.getLogger(__name__)

#: one row per tuned validation node, in the run directory
VALIDUTIL_CSV: str = "validutil.csv"


def validutil(cfg: DictConfig, *, num_val_nodes: int = 20, iterations: int = 100, overrides: Sequence[str] = ()) -> RunRecord:
    """``task=validutil``: the probe on the first ``num_val_nodes`` validation nodes (in node order,
    as the IGB code), every fit ``iterations`` epochs seeded by ``cfg.seed``.

    ``results.json`` metrics: ``test/accuracy`` of the model trained with the tuned pseudo-labels,
    ``validutil/baseline_test_accuracy`` of the unchanged model trained on the training nodes only,
    ``validutil/self_training_test_accuracy`` of the model trained with the initial (untuned)
    pseudo-labels, ``validutil/inflation`` = tuned - baseline, ``val/accuracy`` and
    ``validutil/baseline_val_accuracy`` on the tuned nodes, and ``validutil/pseudo_label_accuracy``
    (initial: ``validutil/initial_pseudo_label_accuracy``): the share of the tuned nodes whose
    pseudo-label is their true label. ``validutil.csv``: one row per tuned node. ``overrides``: Hydra's,
    for the run's provenance."""

    def body(cfg: DictConfig, record: RunRecord, frame: RunFrame) -> None:
        output_dir = frame.output_dir
        datamodule = node_datamodule(cfg)
        record_raw_files(record, datamodule)
        recipe = FullBatchRecipe.from_config(cfg, datamodule.info)
        describe_model(record, recipe)
        graph = datamodule.graph
        assert graph is not None
        seed, num_classes = int(cfg.seed), datamodule.info.num_outputs
        candidates = graph.val_mask.nonzero().view(-1)
        if not 1 <= num_val_nodes <= candidates.numel():
            raise ConfigError(f"task.num_val_nodes={num_val_nodes} must lie in 1..{candidates.numel()} (the validation nodes)")
        tuned_nodes = candidates[:num_val_nodes]
        probe = graph.clone()
        probe.val_mask = torch.zeros_like(graph.val_mask)
        probe.val_mask[tuned_nodes] = True
        baseline = fit(recipe, probe, seed, select=False, epochs=iterations)
        probe.train_mask = graph.train_mask | probe.val_mask
        labels = graph.y.clone()
        labels[tuned_nodes] = baseline.predictions[tuned_nodes]
        initial = labels.clone()
        rows = []
        for node in tuned_nodes.tolist():
            accuracies = []
            for label in range(num_classes):
                labels[node] = label
                accuracies.append(fit(recipe, probe, seed, select=False, epochs=iterations, labels=labels).val)
            best = max(accuracies)
            winners = [c for c, a in enumerate(accuracies) if a == best]
            labels[node] = winners[0] if len(winners) == 1 else int(initial[node])
            rows.append(
                {
                    "node": node,
                    "label": int(graph.y[node]),
                    "initial": int(initial[node]),
                    "tuned": int(labels[node]),
                    "val_accuracy": best,
                }
            )
            log.info(
                "validutil: node %d: pseudo-label %d (true %d), val accuracy %.4f",
                node,
                int(labels[node]),
                int(graph.y[node]),
                best,
            )
        tuned = fit(recipe, probe, seed, select=False, epochs=iterations, labels=labels)
        self_trained = fit(recipe, probe, seed, select=False, epochs=iterations, labels=initial)
        truth = graph.y[tuned_nodes]
        record.best_epoch = record.epochs_trained = int(iterations)
        record.metrics = {
            "train/accuracy": tuned.train,
            "val/accuracy": tuned.val,
            "test/accuracy": tuned.test,
            "validutil/baseline_val_accuracy": baseline.val,
            "validutil/baseline_test_accuracy": baseline.test,
            "validutil/self_training_test_accuracy": self_trained.test,
            "validutil/inflation": tuned.test - baseline.test,
            "validutil/initial_pseudo_label_accuracy": float((initial[tuned_nodes] == truth).float().mean()),
            "validutil/pseudo_label_accuracy": float((labels[tuned_nodes] == truth).float().mean()),
            "validutil/num_val_nodes": float(num_val_nodes),
        }
        with (output_dir / VALIDUTIL_CSV).open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        log.info("validutil: test accuracy %.4f -> %.4f (inflation %+.4f)", baseline.test, tuned.test, tuned.test - baseline.test)

    return recorded_run(cfg, body, overrides=overrides)
