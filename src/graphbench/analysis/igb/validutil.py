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

``task.every_phase`` holds values that all three phases take, by model and dataset, winning over the
baseline's and tuning's generic values (the final setting wins over them): the code's GCN is
``GCNConv(improved=True)`` on CiteSeer, its MixHop of the baseline and tuning fits 160 channels per power.

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
from dataclasses import dataclass
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
from graphbench.analysis.igb.protocol import grid_recipes
from graphbench.analysis.subset_training import node_datamodule
from graphbench.data.info import DatasetInfo
from graphbench.vocabulary.errors import ConfigError

log = logging.getLogger(__name__)

#: one row per tuned validation node, in the run directory
VALIDUTIL_CSV: str = "validutil.csv"
#: the columns of :data:`VALIDUTIL_CSV`: the node, its true label, its initial and tuned pseudo-labels, the
#: validation accuracy of the tuned label's fit
CSV_FIELDS: tuple[str, ...] = ("node", "label", "initial", "tuned", "val_accuracy")


@dataclass(frozen=True)
class ValidUtilPhases:
    """The probe's settings (``conf/task/validutil.yaml``). ``baseline`` and ``tuning``: config values of
    phases 1 and 2 (e.g. ``{optimizer: {lr: 0.02}, trainer: {max_epochs: 400}}``, ``trainer.max_epochs``
    being the iterations); ``every_phase``: values of all phases by model and dataset name (``{gcn:
    {citeseer: {model: {layer: {improved: true}}}}}``); ``final``: the code's final model, ``{runs,
    patience, shared, settings: {<model>: {<dataset>: values}}}`` (:func:`code_final`); ``grid``:
    graphbench's grid search in its place when non-empty
    (:func:`~graphbench.analysis.igb.fit.grid_points`, :func:`grid_final`)."""

    baseline: Any = None
    tuning: Any = None
    every_phase: Any = None
    final: Any = None
    grid: Any = None


@dataclass(frozen=True)
class FinalFits:
    """Phase 3's fits: with the tuned pseudo-labels (``tuned``), on the training nodes only (``unchanged``:
    the unchanged model) and with the initial pseudo-labels (``self_trained``); the ``final/*`` or ``grid/*``
    values of the setting (``chosen``) and its ``recipe``."""

    tuned: list[FitResult]
    unchanged: list[FitResult]
    self_trained: list[FitResult]
    chosen: dict[str, float]
    recipe: FullBatchRecipe


@dataclass(frozen=True)
class ValidUtilResult:
    """The probe's outcome: the validation nodes, every node's label as phase 1 predicts it (``initial``,
    training nodes keep their true label) and after the tuning (``labels``), the ``true_labels``, the number
    of tuned nodes asked for, one row per tuned node (:data:`CSV_FIELDS`) and the final fits."""

    val_nodes: Tensor
    true_labels: Tensor
    initial: Tensor
    labels: Tensor
    num_val_nodes: int
    rows: list[dict[str, Any]]
    final: FinalFits

    @property
    def mean_epochs(self) -> int:
        """The tuned final fits' epoch count, averaged over the runs and rounded."""
        return round(statistics.fmean(r.epochs for r in self.final.tuned))

    def metrics(self) -> dict[str, float]:
        """``results.json``'s metrics (see :func:`graphbench.tasks.validutil.validutil`)."""
        tuned, unchanged = self.final.tuned, self.final.unchanged
        test = _mean(tuned, "test")
        truth = self.true_labels[self.val_nodes]
        return {
            "train/accuracy": _mean(tuned, "train"),
            "val/accuracy": _mean(tuned, "val"),
            "test/accuracy": test,
            "validutil/test_accuracy_std": statistics.stdev([r.test for r in tuned]) if len(tuned) > 1 else 0.0,
            "validutil/baseline_val_accuracy": _mean(unchanged, "val"),
            "validutil/baseline_test_accuracy": _mean(unchanged, "test"),
            "validutil/self_training_test_accuracy": _mean(self.final.self_trained, "test"),
            "validutil/inflation": test - _mean(unchanged, "test"),
            "validutil/initial_pseudo_label_accuracy": float((self.initial[self.val_nodes] == truth).float().mean()),
            "validutil/pseudo_label_accuracy": float((self.labels[self.val_nodes] == truth).float().mean()),
            "validutil/num_val_nodes": float(self.num_val_nodes),
            **self.final.chosen,
        }


def _mean(results: list[FitResult], split: str) -> float:
    return statistics.fmean(getattr(r, split) for r in results)


class PhaseGraphs:
    """Each phase's graph on ``device``, built once per distinct ``dataset`` config (a phase may change the
    dataset's values, e.g. its features); the run's own ``graph`` serves the run's ``dataset``."""

    def __init__(self, cfg: DictConfig, graph: Data, device: torch.device) -> None:
        self.device = device
        self._graphs: dict[str, Data] = {self._key(cfg): graph}

    @staticmethod
    def _key(cfg: DictConfig) -> str:
        return str(OmegaConf.to_container(cfg.dataset, resolve=True))

    def of(self, phase_cfg: DictConfig) -> Data:
        """The graph of ``phase_cfg``'s dataset, on the device."""
        key = self._key(phase_cfg)
        if key not in self._graphs:
            phase_graph = node_datamodule(phase_cfg).graph
            assert phase_graph is not None
            self._graphs[key] = phase_graph.to(self.device)
        return self._graphs[key]


def validutil_probe(
    cfg: DictConfig,
    graph: Data,
    info: DatasetInfo,
    phases: ValidUtilPhases,
    *,
    num_val_nodes: int | None = None,
    tuned_labels: str | None = None,
) -> ValidUtilResult:
    """The probe's three phases on ``graph`` (the run's, on the device every fit runs on), the first
    ``num_val_nodes`` validation nodes tuned (``None``: all); ``tuned_labels``: a file of the validation
    nodes' pseudo-labels (:func:`read_labels`) used instead of phase 2. A missing final setting, a phase
    value that is a list and a node count out of range are :class:`ConfigError` lines before any tuning."""
    graphs = PhaseGraphs(cfg, graph, graph.y.device)
    val_nodes = graph.val_mask.nonzero().view(-1)
    count = tuned_node_count(num_val_nodes, val_nodes.numel())
    common = by_model_and_dataset(phases.every_phase, cfg)
    final_cfg = None if phases.grid else final_config(cfg, phases.every_phase, phases.final)  # fails before the tuning
    base_cfg = phase_config(cfg, "baseline", phases.baseline, common)
    initial = initial_pseudo_labels(FullBatchRecipe.from_config(base_cfg, info), graphs.of(base_cfg), graph, int(cfg.seed))
    labels = initial.clone()
    if tuned_labels is not None:
        labels[val_nodes] = read_labels(tuned_labels, val_nodes.numel(), info.num_outputs).to(labels.device)
    tune_cfg = phase_config(cfg, "tuning", phases.tuning, common)
    tune_recipe = FullBatchRecipe.from_config(tune_cfg, info)
    probe = with_validation_trained(graphs.of(tune_cfg), graph)
    tuned_nodes = val_nodes[:count] if tuned_labels is None else val_nodes[:0]
    rows = tune_pseudo_labels(tune_recipe, probe, int(cfg.seed), labels, initial, graph.y, tuned_nodes, info.num_outputs)
    if phases.grid:
        grid_cfg = phase_config(cfg, "every_phase", common)
        final = grid_final(grid_cfg, info, phases.grid, graph, labels, initial, int(cfg.seed))
    else:
        assert final_cfg is not None
        setting = final_setting(phases.final, cfg)
        final = code_final(final_cfg, info, graphs.of(final_cfg), phases.final, setting, int(cfg.seed), labels, initial)
    return ValidUtilResult(val_nodes, graph.y, initial, labels, count, rows, final)


def tuned_node_count(num_val_nodes: int | None, num_available: int) -> int:
    """How many validation nodes to tune: ``num_val_nodes``, or all ``num_available`` when ``None``; a count
    outside ``1..num_available`` is a :class:`ConfigError`."""
    count = num_available if num_val_nodes is None else int(num_val_nodes)
    if not 1 <= count <= num_available:
        raise ConfigError(
            f"task.num_val_nodes={num_val_nodes} must lie in 1..{num_available} (the validation nodes) or be null (all)"
        )
    return count


def initial_pseudo_labels(recipe: FullBatchRecipe, base_graph: Data, graph: Data, seed: int) -> Tensor:
    """Phase 1: the model trained on the training nodes of ``base_graph`` (``recipe``'s epochs, no
    selection) predicts every validation node of ``graph``; the other nodes keep their true label."""
    first = fit(recipe, base_graph, seed, select=False)
    labels = graph.y.clone()
    val_nodes = graph.val_mask.nonzero().view(-1)
    labels[val_nodes] = first.predictions[val_nodes]
    return labels


def with_validation_trained(graph: Data, masks: Data) -> Data:
    """A copy of ``graph`` trained on the training and validation nodes of ``masks``."""
    augmented = graph.clone()
    augmented.train_mask = masks.train_mask | masks.val_mask
    return augmented


def tune_pseudo_labels(
    recipe: FullBatchRecipe,
    probe: Data,
    seed: int,
    labels: Tensor,
    initial: Tensor,
    truth: Tensor,
    nodes: Tensor,
    num_classes: int,
) -> list[dict[str, Any]]:
    r"""Phase 2: each node :math:`v` of ``nodes`` in turn gets the pseudo-label :math:`c` whose fit scores best
    on the validation nodes: for every class :math:`c` a model is trained on ``probe`` (training plus
    validation nodes) with ``labels`` as targets and :math:`\tilde y_v = c` (the :math:`C` fits at once,
    :func:`~graphbench.analysis.igb.fit.fit_many`), scored against the true labels; the initial
    pseudo-label on a tie. ``labels`` is updated in place, so a node's tuned label is a target of every
    later node's fits. ``truth``: the true labels. Returns one row per node (:data:`CSV_FIELDS`)."""
    rows = []
    for node in nodes.tolist():
        candidates = labels.repeat(num_classes, 1)  # candidate c: the current labels with node's set to c
        candidates[:, node] = torch.arange(num_classes, device=labels.device)
        accuracies = [f.val for f in fit_many(recipe, probe, seed, candidates)]
        best = max(accuracies)
        winners = [c for c, a in enumerate(accuracies) if a == best]
        labels[node] = winners[0] if len(winners) == 1 else int(initial[node])
        rows.append(
            {
                "node": node,
                "label": int(truth[node]),
                "initial": int(initial[node]),
                "tuned": int(labels[node]),
                "val_accuracy": best,
            }
        )
        log.info(
            "validutil: node %d: pseudo-label %d (true %d), val accuracy %.4f", node, int(labels[node]), int(truth[node]), best
        )
    return rows


def code_final(
    final_cfg: DictConfig,
    info: DatasetInfo,
    graph: Data,
    final: Any,
    setting: Any,
    seed: int,
    labels: Tensor,
    initial: Tensor,
) -> FinalFits:
    """Phase 3 as the IGB code's ``final_scripts.sh`` runs it: ``final.runs`` fits from ``seed``,
    each tested at its epoch of minimum validation loss on its targets and stopped ``final.patience``
    epochs after epoch 100 (:func:`~graphbench.analysis.igb.fit.fit_runs`), trained on train + validation
    with ``labels`` (tuned) and ``initial`` as targets, and on the training nodes alone. ``chosen``: the
    numeric values of ``setting`` as ``final/<key>`` and ``final/runs``."""
    recipe = FullBatchRecipe.from_config(final_cfg, info)
    runs, patience = int(final["runs"]), int(final["patience"])
    augmented = with_validation_trained(graph, graph)
    tuned = fit_runs(recipe, augmented, seed, labels, runs=runs, patience=patience)
    unchanged = fit_runs(recipe, graph, seed, graph.y, runs=runs, patience=patience)
    self_trained = fit_runs(recipe, augmented, seed, initial, runs=runs, patience=patience)
    chosen = {
        f"final/{k}": float(v) for k, v in flatten(setting).items() if isinstance(v, (int, float)) and not isinstance(v, bool)
    }
    chosen["final/runs"] = float(runs)
    return FinalFits(tuned, unchanged, self_trained, chosen, recipe)


def grid_final(
    cfg: DictConfig, info: DatasetInfo, grid: Any, graph: Data, labels: Tensor, initial: Tensor, seed: int
) -> FinalFits:
    """graphbench's grid search in place of the code's final model: every point fitted once (``seed``) on
    train + validation with ``labels`` (then ``initial``) as targets, or on the training nodes alone, the
    point and its epoch chosen on validation accuracy against the true labels. ``chosen``: the ``grid/*``
    metrics of the tuned choice."""
    points, recipes = grid_recipes(cfg, info, grid)
    augmented = with_validation_trained(graph, graph)

    def search(targets: Tensor | None, on: Data) -> GridChoice:
        if targets is None:
            return grid_search(points, recipes, [on], seed)
        fits = [fit(r, on, seed, select=True, labels=targets) for r in recipes]
        index = max(range(len(fits)), key=lambda i: (fits[i].val, -i))
        return GridChoice(index, dict(points[index]), recipes[index], [fits[index]], [f.val for f in fits])

    tuned = search(labels, augmented)
    unchanged, self_trained = search(None, graph), search(initial, augmented)
    return FinalFits(tuned.selections, unchanged.selections, self_trained.selections, grid_metrics(tuned), tuned.recipe)


def phase_config(cfg: DictConfig, what: str, *overrides: Any) -> DictConfig:
    """The config of one phase: the composed one with each of ``overrides`` (nested mappings of values) in
    turn, a later one's key winning. A list value is a :class:`ConfigError` (grids go in ``task.grid``)."""
    flat: dict[str, Any] = {}
    for layer in overrides:
        flat.update(flatten(layer))
    for key, value in flat.items():
        if isinstance(value, list):
            raise ConfigError(f"task.{what}.{key}={value!r}: a phase takes one value per key; grids go in task.grid")
    return with_overrides(cfg, flat)


def by_model_and_dataset(node: Any, cfg: DictConfig) -> Any:
    """``node[<model name>][<dataset name>]``, or ``None`` when either is absent."""
    by_dataset = (node or {}).get(str(cfg.model.name))
    return None if by_dataset is None else by_dataset.get(str(cfg.dataset.name))


def final_config(cfg: DictConfig, every_phase: Any, final: Any) -> DictConfig:
    """The final model's config: the composed one with ``every_phase``'s values for its model and dataset,
    then ``final.shared``, then ``final.settings.<model>.<dataset>`` (the code's flags for that model and
    dataset in ``final_scripts.sh``); a missing setting is a :class:`ConfigError` naming the fix."""
    setting = final_setting(final, cfg)
    return phase_config(cfg, "final", by_model_and_dataset(every_phase, cfg), final.get("shared"), setting)


def final_setting(final: Any, cfg: DictConfig) -> Any:
    """The code's final setting for the run's model and dataset (``task.final.settings.<model>.<dataset>``)."""
    setting = by_model_and_dataset((final or {}).get("settings"), cfg)
    if setting is None:
        raise ConfigError(
            f"task.final.settings has no setting for model={cfg.model.name} on dataset={cfg.dataset.name} (the IGB code's "
            f"final_scripts.sh sets gcn, appnp and mixhop on cora and citeseer): add task.final.settings.{cfg.model.name}."
            f"{cfg.dataset.name}={{...}} or search a grid instead (task/grid=final_scripts)"
        )
    return setting


def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    """The tuned nodes' rows as :data:`VALIDUTIL_CSV` (a header only when none was tuned)."""
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(CSV_FIELDS))
        writer.writeheader()
        writer.writerows(rows)


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
