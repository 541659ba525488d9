r"""IGB's select-then-retrain protocol (Li et al., "Rethinking the Setting of Semi-supervised Learning on
Graphs", IJCAI 2022, Section 4; the IGB code's ``main.py``), on one graph or on i.i.d. subgraphs.

Step 2 of the protocol: every setting of a grid is fitted on each graph's training nodes with its best
validation epoch kept, the setting with the highest validation accuracy averaged over the graphs is
chosen (:func:`~graphbench.analysis.igb.fit.grid_search`), and each graph's model is retrained with it on
train + validation for that graph's own selected number of epochs (:func:`search_and_retrain`).

On i.i.d. subgraphs (:func:`iid_evaluation`): ``num_subgraphs`` random-walk subgraphs accepted by the KL
test (:func:`~graphbench.analysis.igb.sampler.sample_subgraphs`), each split 10 / 10 / 80; the test
accuracy is reported as mean :math:`\pm` sample std over the subgraphs, with the subgraphs' mean
pairwise Jaccard overlap and their coverage of the graph.
"""

from __future__ import annotations

import csv
import logging
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig
from torch_geometric.data import Data

from graphbench.analysis.igb.fit import (
    FitResult,
    FullBatchRecipe,
    GridChoice,
    grid_metrics,
    grid_points,
    grid_search,
    retrain,
    with_overrides,
)
from graphbench.analysis.igb.sampler import SampledSubgraph, SamplerStats, overlap_and_coverage, sample_subgraphs, subgraph_data
from graphbench.analysis.igb.walk import UndirectedGraph
from graphbench.data.info import DatasetInfo

log = logging.getLogger(__name__)


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


@dataclass(frozen=True)
class SubgraphSampling:
    """How :func:`iid_evaluation` draws its subgraphs (:func:`~graphbench.analysis.igb.sampler.sample_subgraphs`):
    ``num_subgraphs`` walks of ``num_edges`` distinct edges after ``burn_in`` accepted ones, the KL test's
    ``accept_exponent``, and the ``seed`` of the chain (the same subgraphs for every model and weight seed)."""

    num_subgraphs: int = 100
    num_edges: int = 1000
    burn_in: int = 5
    accept_exponent: float = 5.0
    seed: int = 0


@dataclass(frozen=True)
class IidEvaluation:
    """The protocol on i.i.d. subgraphs: the subgraphs, the sampler's counts, the subgraphs' mean pairwise
    Jaccard ``overlap`` and ``coverage`` of the graph, the grid's ``choice`` and each subgraph's test accuracy."""

    samples: list[SampledSubgraph]
    stats: SamplerStats
    overlap: float
    coverage: float
    choice: GridChoice
    tests: list[float]

    def rows(self) -> list[dict[str, float | int]]:
        """One row per subgraph: its size, KL divergences, selected epochs and accuracies."""
        return [
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
            for index, (sample, selection, test) in enumerate(zip(self.samples, self.choice.selections, self.tests, strict=True))
        ]

    @property
    def median_selected_epochs(self) -> int:
        """The median (the lower of the two middle ones) of the subgraphs' selected epoch counts."""
        return int(statistics.median_low([s.epochs for s in self.choice.selections]))

    def metrics(self) -> dict[str, float]:
        """``train/accuracy``, ``val/accuracy`` (means of the selection fits), ``test/accuracy`` (mean) and
        ``test/accuracy_std`` (sample std, NaN for one subgraph), the ``iid/*`` statistics of the subgraphs
        and the ``grid/*`` values of the choice (:func:`~graphbench.analysis.igb.fit.grid_metrics`)."""
        selections: list[FitResult] = self.choice.selections
        tests = [float(t) for t in self.tests]
        return {
            "train/accuracy": statistics.fmean(float(s.train) for s in selections),
            "val/accuracy": statistics.fmean(float(s.val) for s in selections),
            "test/accuracy": statistics.fmean(tests),
            "test/accuracy_std": statistics.stdev(tests) if len(tests) > 1 else float("nan"),
            "iid/num_subgraphs": float(len(self.samples)),
            "iid/overlap": self.overlap,
            "iid/coverage": self.coverage,
            "iid/mean_nodes": statistics.fmean(float(len(s.nodes)) for s in self.samples),
            "iid/mean_node_kl": statistics.fmean(s.node_kl for s in self.samples),
            "iid/mean_edge_kl": statistics.fmean(s.edge_kl for s in self.samples),
            "iid/acceptance_rate": self.stats.accepted / self.stats.proposed,
            **grid_metrics(self.choice),
        }


def iid_evaluation(
    cfg: DictConfig, graph: Data, info: DatasetInfo, grid: Any, sampling: SubgraphSampling, *, retrained: bool = True
) -> IidEvaluation:
    """The protocol on i.i.d. subgraphs of ``graph``: draw them (``sampling``), then
    :func:`search_and_retrain` over all of them at once (``retrained=False``: each subgraph's
    best-validation model is tested instead of its retrained one). Cost: ``|grid| * num_subgraphs`` fits,
    plus the retrains."""
    num_nodes = int(graph.num_nodes)
    samples, stats = sample_subgraphs(
        graph.edge_index,
        graph.y,
        num_nodes,
        info.num_outputs,
        num_subgraphs=int(sampling.num_subgraphs),
        num_edges=int(sampling.num_edges),
        burn_in=int(sampling.burn_in),
        accept_exponent=float(sampling.accept_exponent),
        seed=int(sampling.seed),
    )
    overlap, coverage = overlap_and_coverage([s.nodes for s in samples], num_nodes)
    log.info("iid_eval: %d subgraphs, overlap %.3f, coverage %.3f", len(samples), overlap, coverage)
    undirected = UndirectedGraph.from_edge_index(graph.edge_index, num_nodes)
    graphs = [subgraph_data(graph, undirected, sample) for sample in samples]
    choice, tests = search_and_retrain(cfg, info, grid, graphs, retrained=retrained)
    return IidEvaluation(samples, stats, overlap, coverage, choice, tests)


def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    """``rows`` as a CSV file with one column per key of the first row."""
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
