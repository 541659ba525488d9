r"""ValidUtil, IGB's over-tuning probe (Li et al., "Rethinking the Setting of Semi-supervised Learning
on Graphs", IJCAI 2022, Section 3), run as the IGB code's ``valid_util_gene_labels.py`` and
``validutil/*.py`` run it.

1. *Baseline*: the model, trained on the training nodes (the code: lr 0.01, weight decay 5e-4, 200
   iterations, no dropout, raw features), predicts every validation node: the initial pseudo-labels.
2. *Tuning*: the pseudo-label :math:`\tilde y_v` of each validation node :math:`v \in V`, one after the
   other in node order, is treated as a hyper-parameter "selected on validation accuracy": for every
   class :math:`c` a fresh model is trained on the training nodes plus all of :math:`V` (pseudo-labels
   as targets, :math:`\tilde y_v = c`; the code: lr 0.02, no weight decay, 400 iterations) and scored
   on all of :math:`V` against the true labels; the best class is kept, the initial pseudo-label on a
   tie.
3. *Final model*: trained on the training nodes plus :math:`V` with the tuned pseudo-labels, its setting
   chosen over a grid (the code's ``final_scripts.sh`` settings came from such a search) and its epoch on
   validation accuracy, and tested.

Nothing about the model changes, yet the tuned pseudo-labels leak :math:`V`'s labels into training and
inflate the test accuracy; the IGB authors call it a "reduction to absurdity", not a method.

Cost: ``|V| * C`` tuning fits (``|V| * C * tuning iterations`` epochs: 500 * 7 * 400 = 1.4 million
full-batch epochs for GCN on Cora), plus one baseline fit and ``3 * |grid|`` final fits. The IGB code
pays it one fit per (node, class), on a GPU; here the ``C`` fits of one node train at once
(:func:`~graphbench.analysis.igb.fit.fit_many`: the same fits, batched by :func:`torch.func.vmap`), so
the probe is ``|V| * tuning iterations`` batched steps (200,000 for Cora). The nodes stay one after
the other: a node's tuned label is a target of every later node's fits. Deviation: every fit starts
from the weights ``seed`` gives (the code re-initialises from a running generator), so the probe is
deterministic and a candidate's score differs from another's only by its label.
"""

from __future__ import annotations

import csv
import logging
from collections.abc import Sequence
from typing import Any

import torch
from omegaconf import DictConfig, OmegaConf
from torch import Tensor
from torch_geometric.data import Data

from graphbench.analysis.igb.fit import (
    FullBatchRecipe,
    GridChoice,
    fit,
    fit_many,
    flatten,
    grid_metrics,
    grid_search,
    with_overrides,
)
from graphbench.analysis.subset_training import node_datamodule
from graphbench.run.errors import ConfigError
from graphbench.run.frame import RunFrame, record_raw_files, recorded_run
from graphbench.run.record import RunRecord
from graphbench.tasks.igb import describe_model, grid_recipes, last_epoch

log = logging.getLogger(__name__)

#: one row per tuned validation node, in the run directory
VALIDUTIL_CSV: str = "validutil.csv"


def _phase(cfg: DictConfig, overrides: Any, what: str) -> tuple[DictConfig, dict[str, Any]]:
    """The config of one phase: the composed one with ``overrides`` (a nested mapping of values)."""
    flat = flatten(overrides)
    for key, value in flat.items():
        if isinstance(value, list):
            raise ConfigError(f"task.{what}.{key}={value!r}: a phase takes one value per key; grids go in task.grid")
    return with_overrides(cfg, flat), flat


def validutil(
    cfg: DictConfig,
    *,
    num_val_nodes: int | None = None,
    baseline: Any = None,
    tuning: Any = None,
    grid: Any = None,
    device: str = "auto",
    overrides: Sequence[str] = (),
) -> RunRecord:
    """``task=validutil``: the probe with the first ``num_val_nodes`` validation nodes tuned (``None``:
    all, as the IGB code; the others keep their initial pseudo-label and are trained on and scored all
    the same). ``baseline`` and ``tuning``: config values of phases 1 and 2 (e.g. ``{optimizer: {lr:
    0.02}, trainer: {max_epochs: 400}}``, ``trainer.max_epochs`` being the iterations); ``grid``: the
    final model's grid (:func:`~graphbench.analysis.igb.fit.grid_points`); ``device``: where every fit runs
    (``auto``: CUDA when there is one, else the CPU; or a torch device such as ``cpu``, ``cuda:0``).

    ``results.json`` metrics: ``test/accuracy`` of the final model trained with the tuned
    pseudo-labels; ``validutil/baseline_test_accuracy`` of the final model's grid trained on the
    training nodes only (the unchanged model); ``validutil/self_training_test_accuracy`` with the
    initial (untuned) pseudo-labels; ``validutil/inflation`` = tuned - baseline; ``val/accuracy`` on
    all validation nodes; ``validutil/pseudo_label_accuracy`` (initial:
    ``validutil/initial_pseudo_label_accuracy``): the share of the validation nodes whose pseudo-label
    is their true label; ``grid/*``: the final model's chosen setting. ``validutil.csv``: one row per
    tuned node. ``overrides``: Hydra's, for the run's provenance."""

    def body(cfg: DictConfig, record: RunRecord, frame: RunFrame) -> None:
        where = torch.device(device if device != "auto" else "cuda" if torch.cuda.is_available() else "cpu")
        datamodule = node_datamodule(cfg)
        record_raw_files(record, datamodule)
        info = datamodule.info
        assert datamodule.graph is not None
        graph = datamodule.graph.to(where)
        seed, num_classes = int(cfg.seed), info.num_outputs
        val_nodes = graph.val_mask.nonzero().view(-1)
        count = val_nodes.numel() if num_val_nodes is None else int(num_val_nodes)
        if not 1 <= count <= val_nodes.numel():
            raise ConfigError(
                f"task.num_val_nodes={num_val_nodes} must lie in 1..{val_nodes.numel()} (the validation nodes) or be null (all)"
            )
        tuned_nodes = val_nodes[:count]
        graphs: dict[str, Data] = {}

        def graph_of(phase_cfg: DictConfig) -> Data:
            key = str(OmegaConf.to_container(phase_cfg.dataset, resolve=True))
            if key not in graphs:
                phase_graph = node_datamodule(phase_cfg).graph
                assert phase_graph is not None
                graphs[key] = phase_graph.to(where)
            return graphs[key]

        graphs[str(OmegaConf.to_container(cfg.dataset, resolve=True))] = graph
        base_cfg, _ = _phase(cfg, baseline, "baseline")
        first = fit(FullBatchRecipe.from_config(base_cfg, info), graph_of(base_cfg), seed, select=False)
        labels = graph.y.clone()
        labels[val_nodes] = first.predictions[val_nodes]
        initial = labels.clone()

        tune_cfg, _ = _phase(cfg, tuning, "tuning")
        tune_recipe = FullBatchRecipe.from_config(tune_cfg, info)
        probe = graph_of(tune_cfg).clone()
        probe.train_mask = graph.train_mask | graph.val_mask
        rows = []
        for node in tuned_nodes.tolist():
            candidates = labels.repeat(num_classes, 1)  # candidate c: the current labels with node's set to c
            candidates[:, node] = torch.arange(num_classes, device=labels.device)
            accuracies = [f.val for f in fit_many(tune_recipe, probe, seed, candidates)]
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

        points, recipes = grid_recipes(cfg, info, grid)
        augmented = graph.clone()
        augmented.train_mask = graph.train_mask | graph.val_mask

        def final(targets: Tensor | None, on: Data) -> GridChoice:
            """The grid search of the final model, selecting the setting and epoch on validation accuracy
            (true labels) while training on ``on.train_mask`` with ``targets``."""
            if targets is None:
                return grid_search(points, recipes, [on], seed)
            fits = [fit(r, on, seed, select=True, labels=targets) for r in recipes]
            index = max(range(len(fits)), key=lambda i: (fits[i].val, -i))
            return GridChoice(index, dict(points[index]), recipes[index], [fits[index]], [f.val for f in fits])

        tuned = final(labels, augmented)
        unchanged = final(None, graph)
        self_trained = final(initial, augmented)
        (result,) = tuned.selections
        describe_model(record, tuned.recipe)
        truth = graph.y[val_nodes]
        record.best_epoch, record.epochs_trained = last_epoch(result.epochs), tuned.recipe.max_epochs
        record.metrics = {
            "train/accuracy": result.train,
            "val/accuracy": result.val,
            "test/accuracy": result.test,
            "validutil/baseline_val_accuracy": unchanged.selections[0].val,
            "validutil/baseline_test_accuracy": unchanged.selections[0].test,
            "validutil/self_training_test_accuracy": self_trained.selections[0].test,
            "validutil/inflation": result.test - unchanged.selections[0].test,
            "validutil/initial_pseudo_label_accuracy": float((initial[val_nodes] == truth).float().mean()),
            "validutil/pseudo_label_accuracy": float((labels[val_nodes] == truth).float().mean()),
            "validutil/num_val_nodes": float(count),
            **grid_metrics(tuned),
        }
        with (frame.output_dir / VALIDUTIL_CSV).open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        log.info(
            "validutil: test accuracy %.4f -> %.4f (inflation %+.4f)",
            unchanged.selections[0].test,
            result.test,
            record.metrics["validutil/inflation"],
        )

    return recorded_run(cfg, body, overrides=overrides)
