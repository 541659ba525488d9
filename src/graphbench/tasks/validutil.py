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
3. *Final model*: as ``validutil/final_scripts.sh`` runs it (``validutil/gcn.py``, ``appnp.py`` and
   ``train_eval.py``): the code's one setting for the model and dataset (``task.final.settings``; GCN on Cora:
   lr 0.005, hidden 32, dropout 0.1; on CiteSeer: lr 0.01, hidden 64, dropout 0.3; weight decay 1e-4),
   trained on the training nodes plus :math:`V` with the tuned pseudo-labels, 10 runs from one seed, each
   tested at its epoch of minimum validation loss on the pseudo-labels and stopped early after epoch 100
   (:func:`~graphbench.analysis.igb.fit.fit_runs`); the test accuracy is the mean over the runs.
   ``task.grid`` (``task/grid=final_scripts``) replaces it by graphbench's own alternative, not the
   code's: a grid search, each point fitted once and chosen with its epoch on validation accuracy
   against the true labels.

``task.every_phase`` holds values that all three phases take, by model and dataset: the code's GCN is
``GCNConv(improved=True)`` on CiteSeer.

Nothing about the model changes, yet the tuned pseudo-labels leak :math:`V`'s labels into training and
inflate the test accuracy; the IGB authors call it a "reduction to absurdity", not a method.

Cost: ``|V| * C`` tuning fits (``|V| * C * tuning iterations`` epochs: 500 * 7 * 400 = 1.4 million
full-batch epochs for GCN on Cora), plus one baseline fit and ``3 * runs`` final fits (``3 * |grid|``
with a grid). The IGB code pays it one fit per (node, class), on a GPU; here the ``C`` fits of one node train at once
(:func:`~graphbench.analysis.igb.fit.fit_many`: the same fits, batched by :func:`torch.func.vmap`), so
the probe is ``|V| * tuning iterations`` batched steps (200,000 for Cora). The nodes stay one after
the other: a node's tuned label is a target of every later node's fits. Deviation: every fit starts
from the weights ``seed`` gives (the code re-initialises from a running generator), so the probe is
deterministic and a candidate's score differs from another's only by its label.
"""

from __future__ import annotations

import csv
import logging
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf
from torch import Tensor
from torch_geometric.data import Data

from graphbench.analysis.igb.fit import (
    FitResult,
    FullBatchRecipe,
    GridChoice,
    fit,
    fit_many,
    fit_runs,
    flatten,
    grid_metrics,
    grid_search,
    with_overrides,
)
from graphbench.analysis.subset_training import node_datamodule
from graphbench.data.info import DatasetInfo
from graphbench.run.errors import ConfigError
from graphbench.run.frame import RunFrame, record_raw_files, recorded_run
from graphbench.run.record import RunRecord
from graphbench.tasks.igb import describe_model, grid_recipes, last_epoch

log = logging.getLogger(__name__)

#: one row per tuned validation node, in the run directory
VALIDUTIL_CSV: str = "validutil.csv"


def _phase(cfg: DictConfig, what: str, *overrides: Any) -> DictConfig:
    """The config of one phase: the composed one with each of ``overrides`` (nested mappings of values) in
    turn, a later one's key winning."""
    flat: dict[str, Any] = {}
    for layer in overrides:
        flat.update(flatten(layer))
    for key, value in flat.items():
        if isinstance(value, list):
            raise ConfigError(f"task.{what}.{key}={value!r}: a phase takes one value per key; grids go in task.grid")
    return with_overrides(cfg, flat)


def _by_model_and_dataset(node: Any, cfg: DictConfig) -> Any:
    """``node[<model name>][<dataset name>]``, or ``None`` when either is absent."""
    by_dataset = (node or {}).get(str(cfg.model.name))
    return None if by_dataset is None else by_dataset.get(str(cfg.dataset.name))


def _mean(results: list[FitResult], split: str) -> float:
    return statistics.fmean(getattr(r, split) for r in results)


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
    the same). ``baseline`` and ``tuning``: config values of phases 1 and 2 (e.g. ``{optimizer: {lr:
    0.02}, trainer: {max_epochs: 400}}``, ``trainer.max_epochs`` being the iterations); ``every_phase``:
    values of all phases by model and dataset name (``{gcn: {citeseer: {model: {layer: {improved: true}}}}}``);
    ``final``: the code's final model, ``{runs, patience, shared, settings: {<model>: {<dataset>: values}}}``
    (:func:`~graphbench.analysis.igb.fit.fit_runs`); ``grid``: graphbench's grid search in its place when
    non-empty (:func:`~graphbench.analysis.igb.fit.grid_points`); ``tuned_labels``: a file of the validation
    nodes' pseudo-labels in node order (:func:`read_labels`, e.g. the IGB authors' published
    ``pseudo_label_list/GCN_Cora_label_list.pt``) used instead of phase 2, which is then skipped
    (``validutil.csv`` has no rows); ``device``: where every fit runs
    (``auto``: CUDA when there is one, else the CPU; or a torch device such as ``cpu``, ``cuda:0``).

    ``results.json`` metrics: ``test/accuracy`` of the final model trained with the tuned
    pseudo-labels (the mean over ``final.runs``, their sample std ``validutil/test_accuracy_std``);
    ``validutil/baseline_test_accuracy`` of the final model trained on the training nodes only (the
    unchanged model); ``validutil/self_training_test_accuracy`` with the initial (untuned)
    pseudo-labels; ``validutil/inflation`` = tuned - baseline; ``val/accuracy`` on all validation nodes
    (true labels); ``validutil/pseudo_label_accuracy`` (initial:
    ``validutil/initial_pseudo_label_accuracy``): the share of the validation nodes whose pseudo-label
    is their true label; ``final/*`` the final setting's values (``grid/*``: the grid's chosen point).
    ``validutil.csv``: one row per tuned node. ``overrides``: Hydra's, for the run's provenance."""

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
        tuned_nodes = val_nodes[:count] if tuned_labels is None else val_nodes[:0]
        graphs: dict[str, Data] = {}

        def graph_of(phase_cfg: DictConfig) -> Data:
            key = str(OmegaConf.to_container(phase_cfg.dataset, resolve=True))
            if key not in graphs:
                phase_graph = node_datamodule(phase_cfg).graph
                assert phase_graph is not None
                graphs[key] = phase_graph.to(where)
            return graphs[key]

        graphs[str(OmegaConf.to_container(cfg.dataset, resolve=True))] = graph
        common = _by_model_and_dataset(every_phase, cfg)
        final_cfg = None if grid else final_config(cfg, every_phase, final)  # before the tuning: fails at once
        base_cfg = _phase(cfg, "baseline", common, baseline)
        first = fit(FullBatchRecipe.from_config(base_cfg, info), graph_of(base_cfg), seed, select=False)
        labels = graph.y.clone()
        labels[val_nodes] = first.predictions[val_nodes]
        initial = labels.clone()
        if tuned_labels is not None:
            labels[val_nodes] = read_labels(tuned_labels, val_nodes.numel(), num_classes).to(labels.device)

        tune_cfg = _phase(cfg, "tuning", common, tuning)
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

        if grid:
            grid_cfg = _phase(cfg, "every_phase", common)
            tuned, unchanged, self_trained, chosen, recipe = _grid_final(grid_cfg, info, grid, graph, labels, initial, seed)
        else:
            assert final_cfg is not None and final is not None
            recipe = FullBatchRecipe.from_config(final_cfg, info)
            final_graph = graph_of(final_cfg)
            runs, patience = int(final["runs"]), int(final["patience"])
            augmented = final_graph.clone()
            augmented.train_mask = final_graph.train_mask | final_graph.val_mask
            tuned = fit_runs(recipe, augmented, seed, labels, runs=runs, patience=patience)
            unchanged = fit_runs(recipe, final_graph, seed, final_graph.y, runs=runs, patience=patience)
            self_trained = fit_runs(recipe, augmented, seed, initial, runs=runs, patience=patience)
            chosen = {
                f"final/{k}": float(v)
                for k, v in flatten(_final_setting(final, cfg)).items()
                if isinstance(v, (int, float)) and not isinstance(v, bool)
            }
            chosen["final/runs"] = float(runs)
        describe_model(record, recipe)
        truth = graph.y[val_nodes]
        test = _mean(tuned, "test")
        record.best_epoch = last_epoch(round(statistics.fmean(r.epochs for r in tuned)))
        record.epochs_trained = recipe.max_epochs
        record.metrics = {
            "train/accuracy": _mean(tuned, "train"),
            "val/accuracy": _mean(tuned, "val"),
            "test/accuracy": test,
            "validutil/test_accuracy_std": statistics.stdev([r.test for r in tuned]) if len(tuned) > 1 else 0.0,
            "validutil/baseline_val_accuracy": _mean(unchanged, "val"),
            "validutil/baseline_test_accuracy": _mean(unchanged, "test"),
            "validutil/self_training_test_accuracy": _mean(self_trained, "test"),
            "validutil/inflation": test - _mean(unchanged, "test"),
            "validutil/initial_pseudo_label_accuracy": float((initial[val_nodes] == truth).float().mean()),
            "validutil/pseudo_label_accuracy": float((labels[val_nodes] == truth).float().mean()),
            "validutil/num_val_nodes": float(count),
            **chosen,
        }
        with (frame.output_dir / VALIDUTIL_CSV).open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=["node", "label", "initial", "tuned", "val_accuracy"])
            writer.writeheader()
            writer.writerows(rows)
        log.info(
            "validutil: test accuracy %.4f -> %.4f (inflation %+.4f)",
            record.metrics["validutil/baseline_test_accuracy"],
            test,
            record.metrics["validutil/inflation"],
        )

    return recorded_run(cfg, body, overrides=overrides)


def final_config(cfg: DictConfig, every_phase: Any, final: Any) -> DictConfig:
    """The final model's config: the composed one with ``every_phase``'s values for its model and dataset,
    then ``final.shared``, then ``final.settings.<model>.<dataset>`` (the code's flags for that model and
    dataset in ``final_scripts.sh``); a missing setting is a :class:`ConfigError` naming the fix."""
    setting = _final_setting(final, cfg)
    return _phase(cfg, "final", _by_model_and_dataset(every_phase, cfg), final.get("shared"), setting)


def _final_setting(final: Any, cfg: DictConfig) -> Any:
    """The code's final setting for the run's model and dataset (``task.final.settings.<model>.<dataset>``)."""
    setting = _by_model_and_dataset((final or {}).get("settings"), cfg)
    if setting is None:
        raise ConfigError(
            f"task.final.settings has no setting for model={cfg.model.name} on dataset={cfg.dataset.name} (the IGB code's "
            f"final_scripts.sh sets gcn and appnp on cora and citeseer): add task.final.settings.{cfg.model.name}."
            f"{cfg.dataset.name}={{...}} or search a grid instead (task/grid=final_scripts)"
        )
    return setting


def _grid_final(
    cfg: DictConfig, info: DatasetInfo, grid: Any, graph: Data, labels: Tensor, initial: Tensor, seed: int
) -> tuple[list[FitResult], list[FitResult], list[FitResult], dict[str, float], FullBatchRecipe]:
    """graphbench's grid search in place of the code's final model: every point fitted once (``seed``) on
    train + validation with ``labels`` (then ``initial``) as targets, or on the training nodes alone, the
    point and its epoch chosen on validation accuracy against the true labels. Returns the tuned, unchanged
    and self-trained fits, the ``grid/*`` metrics of the tuned choice and its recipe."""
    points, recipes = grid_recipes(cfg, info, grid)
    augmented = graph.clone()
    augmented.train_mask = graph.train_mask | graph.val_mask

    def search(targets: Tensor | None, on: Data) -> GridChoice:
        if targets is None:
            return grid_search(points, recipes, [on], seed)
        fits = [fit(r, on, seed, select=True, labels=targets) for r in recipes]
        index = max(range(len(fits)), key=lambda i: (fits[i].val, -i))
        return GridChoice(index, dict(points[index]), recipes[index], [fits[index]], [f.val for f in fits])

    tuned = search(labels, augmented)
    unchanged, self_trained = search(None, graph), search(initial, augmented)
    return tuned.selections, unchanged.selections, self_trained.selections, grid_metrics(tuned), tuned.recipe


def read_labels(path: str, count: int, num_classes: int) -> Tensor:
    """``count`` class indices from ``path``: ``.npy`` (NumPy), ``.txt`` (whitespace-separated integers) or
    ``.pt`` (a tensor, list or array saved by ``torch.save``, as the IGB code saves its
    ``pseudo_label_list/*.pt``; unpickled, so only files you trust). Raises :class:`ConfigError` naming the
    file when it does not hold ``count`` labels in ``0..num_classes-1``."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"task.tuned_labels={path}: no such file")
    if file.suffix == ".npy":
        values = np.load(file)
    elif file.suffix == ".txt":
        values = np.loadtxt(file, dtype=np.int64, ndmin=1)
    elif file.suffix == ".pt":
        values = torch.load(file, weights_only=False)
    else:
        raise ConfigError(f"task.tuned_labels={path}: expected a .npy, .txt or .pt file")
    labels = torch.as_tensor(np.asarray(values), dtype=torch.long).view(-1)
    if labels.numel() != count or bool((labels < 0).any()) or bool((labels >= num_classes).any()):
        raise ConfigError(
            f"task.tuned_labels={path}: expected {count} labels in 0..{num_classes - 1} (one per validation node), "
            f"got {labels.numel()} in {int(labels.min())}..{int(labels.max())}"
        )
    return labels
