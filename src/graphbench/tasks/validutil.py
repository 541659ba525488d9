"""``task=validutil``: IGB's over-tuning probe ValidUtil (Li et al., "Rethinking the Setting of
Semi-supervised Learning on Graphs", IJCAI 2022, Section 3), whose phases
:mod:`graphbench.analysis.igb.validutil` states and runs; this task reads its settings, runs it on the
dataset's graph and records the outcome."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import torch
from omegaconf import DictConfig

from graphbench.analysis.igb.validutil import VALIDUTIL_CSV, ValidUtilPhases, validutil_probe, write_rows
from graphbench.analysis.subset_training import node_datamodule
from graphbench.run.frame import completed_run, record_raw_files, run_frame
from graphbench.run.record import RunRecord
from graphbench.tasks.igb import describe_model, last_epoch

log = logging.getLogger(__name__)


def validutil(
    cfg: DictConfig,
    *,
    num_val_nodes: int | None = None,
    baseline: Any = None,
    tuning: Any = None,
    every_phase: Any = None,
    final: Any = None,
    grid: Any = None,
    tuned_labels: str | None = None,
    device: str = "auto",
    overrides: Sequence[str] = (),
) -> RunRecord:
    """``task=validutil``: the probe with the first ``num_val_nodes`` validation nodes tuned (``None``:
    all, as the IGB code; the others keep their initial pseudo-label and are trained on and scored all
    the same). ``baseline``, ``tuning``, ``every_phase``, ``final`` and ``grid``: the phases' settings
    (:class:`~graphbench.analysis.igb.validutil.ValidUtilPhases`); ``tuned_labels``: a file of the
    validation nodes' pseudo-labels in node order (:func:`~graphbench.analysis.igb.validutil.read_labels`,
    e.g. the IGB authors' ``pseudo_label_list/GCN_Cora_label_list.pt``) used instead of phase 2, which is
    then skipped (``validutil.csv`` has no rows); ``device``: where every fit runs (``auto``: CUDA when
    there is one, else the CPU; or a torch device such as ``cpu``, ``cuda:0``).

    ``results.json`` metrics: ``test/accuracy`` of the final model trained with the tuned
    pseudo-labels (the mean over ``final.runs``, their sample std ``validutil/test_accuracy_std``);
    ``validutil/baseline_test_accuracy`` of the final model trained on the training nodes only (the
    unchanged model); ``validutil/self_training_test_accuracy`` with the initial (untuned)
    pseudo-labels; ``validutil/inflation`` = tuned - baseline; ``val/accuracy`` on all validation nodes
    (true labels); ``validutil/pseudo_label_accuracy`` (initial:
    ``validutil/initial_pseudo_label_accuracy``): the share of the validation nodes whose pseudo-label
    is their true label; ``final/*`` the final setting's values (``grid/*``: the grid's chosen point).
    ``validutil.csv``: one row per tuned node. ``overrides``: Hydra's, for the run's provenance."""

    phases = ValidUtilPhases(baseline, tuning, every_phase, final, grid)

    if (done := completed_run(cfg)) is not None:  # resume=auto skips a completed run
        return done
    with run_frame(cfg, overrides) as frame:
        record = frame.record
        where = torch.device(device if device != "auto" else "cuda" if torch.cuda.is_available() else "cpu")
        datamodule = node_datamodule(cfg)
        record_raw_files(record, datamodule)
        assert datamodule.graph is not None
        graph = datamodule.graph.to(where)
        result = validutil_probe(cfg, graph, datamodule.info, phases, num_val_nodes=num_val_nodes, tuned_labels=tuned_labels)
        describe_model(record, result.final.recipe)
        record.best_epoch = last_epoch(result.mean_epochs)
        record.epochs_trained = result.final.recipe.max_epochs
        record.metrics = result.metrics()
        write_rows(frame.output_dir / VALIDUTIL_CSV, result.rows)
        log.info(
            "validutil: test accuracy %.4f -> %.4f (inflation %+.4f)",
            record.metrics["validutil/baseline_test_accuracy"],
            record.metrics["test/accuracy"],
            record.metrics["validutil/inflation"],
        )
    return frame.record
