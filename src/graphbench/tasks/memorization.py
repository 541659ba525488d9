"""The ``memorization`` task (``python run.py task=memorization``): NCMemo's label-memorization
score of every node, as :mod:`graphbench.analysis.memorization` defines it, from models trained on the
shared + candidate and shared + independent node sets.

``graph`` says which graph the protocol runs on: ``largest_component``, the largest connected component
(the study's real-world code, AdarshMJ/MemorizationinGNNs@335b56e ``RealWorld/getdataset.py``:
``LargestConnectedComponents()`` before its ``RandomNodeSplit``), or ``whole``, the graph as the dataset
gives it (its ``SBM/main_syncora.py`` on the syn-cora graphs). ``auto``, the default, is ``whole`` on a
dataset whose config says ``synthetic: true`` and ``largest_component`` on any other.

``stratified`` says how that graph's 60/20/20 train/val/test split is drawn: ``true``, per class (the study's
syn-cora code, ``SBM/getdataset.py``: ``CustomDataset(setting="gcn")``, whose ``SBM/dataset.py``
``get_train_val_test`` shuffles each class and cuts it 60/20/20), or ``false``, uniformly over the nodes (its
real-world code, ``RealWorld/getdataset.py``: ``RandomNodeSplit(split='train_rest', num_val=0.2,
num_test=0.2)``). ``auto``, the default, is ``true`` on a ``synthetic: true`` dataset and ``false`` on any
other, the study's split for that kind of graph. The uniform split
(:func:`~graphbench.data.splits.random_split_masks`) rounds the train and val sizes and gives the test the rest,
where ``RandomNodeSplit`` rounds val and test and gives train the rest: the sizes can differ by one node (Texas's
183: 110/37/36 here, 109/37/37 there)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from graphbench.analysis.memorization import (
    CSV_FILENAME,
    HISTOGRAM_FILENAME,
    INITS,
    SCORED_SEEDS,
    SETS,
    SUBSET_ORDERS,
    MemorizationProtocol,
    check_fractions,
    log_image,
    memorization_metrics,
    memorization_sets,
    node_rows,
    plot_title,
    scored_probabilities,
    train_models,
    write_csv,
)
from graphbench.analysis.subset_training import node_datamodule
from graphbench.build.loggers import open_loggers
from graphbench.build.model import sized_network
from graphbench.run.checkpoints import CHECKPOINTS
from graphbench.run.frame import completed_run, record_raw_files, run_frame
from graphbench.run.record import RunRecord
from graphbench.vocabulary.errors import ConfigError

log = logging.getLogger(__name__)

#: ``task.graph``: the graph the protocol runs on (see the module docstring)
GRAPHS: tuple[str, ...] = ("auto", "largest_component", "whole")


def uses_largest_component(graph: str, dataset: DictConfig) -> bool:
    """``task.graph`` resolved for ``dataset``: ``auto`` keeps a synthetic graph (``dataset.synthetic``)
    whole and takes the largest connected component of any other."""
    if graph not in GRAPHS:
        raise ConfigError(f"task.graph={graph!r} is not valid; valid: {list(GRAPHS)}")
    if graph == "auto":
        return not bool(dataset.get("synthetic", False))
    return graph == "largest_component"


def uses_stratified_split(stratified: bool | str, dataset: DictConfig) -> bool:
    """``task.stratified`` resolved for ``dataset``: ``auto`` draws a synthetic graph's split
    (``dataset.synthetic``) per class and any other's uniformly; ``true`` and ``false`` force either."""
    if stratified == "auto":
        return bool(dataset.get("synthetic", False))
    if not isinstance(stratified, bool):
        raise ConfigError(f"task.stratified={stratified!r} is not valid; valid: true, false, auto")
    return stratified


def run_memorization(
    cfg: DictConfig,
    *,
    tau: float = 0.5,
    num_seeds: int = 3,
    split_fractions: Any = (0.6, 0.2, 0.2),
    subset_fractions: Any = (0.5, 0.25, 0.25),
    stratified: bool | str = "auto",
    knn_k: int = 3,
    checkpoint: str = "best",
    plots: bool = True,
    subset_order: str = "shuffled",
    scored_seeds: str = "all",
    init: str = "shared",
    graph: str = "auto",
    overrides: Sequence[str] = (),
) -> RunRecord:
    """The ``task=memorization`` entry point (``conf/task/memorization.yaml``); returns the run's record,
    which is also in ``<paths.output_dir>/results.json``. The node split is drawn with ``cfg.seed``; the
    models of replicate ``cfg.seed`` use the seeds ``cfg.seed * num_seeds + i``, ``i < num_seeds``.
    ``subset_order``, ``scored_seeds`` and ``init`` choose between the paper's protocol and its code's
    (:mod:`graphbench.analysis.memorization`); ``graph`` the whole graph or its largest connected component
    (module docstring); ``stratified`` a split per class or a uniform one (module docstring). ``overrides``:
    Hydra's task overrides, recorded in the run's provenance."""
    if checkpoint not in CHECKPOINTS:
        raise ConfigError(f"task.checkpoint={checkpoint!r} is not valid; valid: {list(CHECKPOINTS)}")
    if subset_order not in SUBSET_ORDERS:
        raise ConfigError(f"task.subset_order={subset_order!r} is not valid; valid: {list(SUBSET_ORDERS)}")
    if scored_seeds not in SCORED_SEEDS:
        raise ConfigError(f"task.scored_seeds={scored_seeds!r} is not valid; valid: {list(SCORED_SEEDS)}")
    if init not in INITS:
        raise ConfigError(f"task.init={init!r} is not valid; valid: {list(INITS)}")
    if isinstance(num_seeds, bool) or not isinstance(num_seeds, int) or num_seeds < 1:
        raise ConfigError(f"task.num_seeds must be a positive integer, got {num_seeds!r}")
    if not isinstance(tau, (int, float)) or isinstance(tau, bool):
        raise ConfigError(f"task.tau must be a number, got {tau!r}")
    largest_component = uses_largest_component(graph, cfg.dataset)
    per_class = uses_stratified_split(stratified, cfg.dataset)

    protocol = MemorizationProtocol(
        float(tau),
        num_seeds,
        check_fractions(split_fractions, "split_fractions"),
        check_fractions(subset_fractions, "subset_fractions"),
        per_class,
        knn_k,
        checkpoint,
        bool(plots),
        subset_order,
        scored_seeds,
        init,
    )

    if (done := completed_run(cfg)) is not None:  # resume=auto skips a completed run
        return done
    with run_frame(cfg, overrides) as frame:
        _memorization(cfg, frame.record, frame.output_dir, frame.loggers, protocol, largest_component)
    return frame.record


def _memorization(
    cfg: DictConfig,
    record: RunRecord,
    output_dir: Path,
    loggers: list[Any],
    protocol: MemorizationProtocol,
    largest_component: bool,
) -> None:
    """The protocol of :mod:`graphbench.analysis.memorization` on the dataset's graph (its largest connected
    component with ``largest_component``): the node sets, the models, every node's scores
    (``memorization.csv``, node ids of that graph), the summary metrics and the histogram."""
    datamodule = node_datamodule(cfg, largest_component)
    record_raw_files(record, datamodule)
    graph = datamodule.graph
    assert graph is not None
    labels = graph.y.view(-1).long()
    sets = memorization_sets(
        labels, protocol.split_fractions, protocol.subset_fractions, int(cfg.seed), protocol.stratified, protocol.subset_order
    )
    open_loggers(cfg, record, loggers)
    sized = sized_network(cfg, datamodule.info)
    record.hidden_dim, record.num_params = sized.hidden_dim, sized.num_params
    log.info(
        "memorization on %s: %d nodes, split %s",
        "the largest connected component" if largest_component else "the whole graph",
        labels.numel(),
        "per class" if protocol.stratified else "uniformly",
    )
    log.info(
        "memorization: |S_S|=%d |S_C|=%d |S_I|=%d, control %d test nodes, %d val nodes, %d seeds per model",
        len(sets.shared),
        len(sets.candidate),
        len(sets.independent),
        len(sets.control),
        len(sets.val),
        protocol.num_seeds,
    )
    probs_f, probs_g = train_models(cfg, datamodule, sets, protocol, output_dir)
    score_f, score_g = scored_probabilities(probs_f, probs_g, protocol.scored_seeds)
    rows, lds_of = node_rows(graph.x, graph.edge_index, labels, sets, score_f, score_g, protocol.knn_k)
    write_csv(output_dir / CSV_FILENAME, rows)
    metrics = memorization_metrics(probs_f, probs_g, labels, sets, lds_of, protocol.tau, protocol.scored_seeds)
    record.metrics = metrics
    record.monitor, record.metric, record.higher_is_better = "memorization/rate", "memorization_rate", False
    record.score = "memorization/rate"
    log.info(
        "memorization rate (tau=%g): candidates %.1f%%, control %.1f%%; test accuracy f %.4f, g %.4f",
        protocol.tau,
        100 * metrics["memorization/rate"],  # type: ignore[operator]
        100 * metrics["memorization/rate_control"],  # type: ignore[operator]
        metrics["test/accuracy_f"],
        metrics["test/accuracy_g"],
    )
    for lg in loggers:
        lg.log_metrics({k: v for k, v in metrics.items() if v is not None})
    if protocol.plots:
        _plot_histogram(cfg, rows, protocol.tau, output_dir, loggers)


def _plot_histogram(cfg: DictConfig, rows: list[dict[str, Any]], tau: float, output_dir: Path, loggers: list[Any]) -> None:
    """``memorization_hist.png``: the scores of every set, logged to the W&B loggers too."""
    from graphbench.analysis.memorization_plots import plot_histogram

    scores = {name: [r["mem"] for r in rows if r["set"] == name] for name in SETS}
    path = plot_histogram(scores, tau, output_dir / HISTOGRAM_FILENAME, title=plot_title(cfg))
    log_image(loggers, "memorization/histogram", path)
