r"""``task=memorization``: label memorization of node classifiers, the NCMemo protocol (Jamadandi et
al., "Memorization in Graph Neural Networks", after Feldman's leave-one-out memorization).

1. A random 60/20/20 node split (train/val/test): per class, as the study's syn-cora code draws it, or
   uniformly, as its real-world code does (``task.stratified``, :mod:`graphbench.tasks.memorization`).
2. The training nodes, shuffled, are split into shared :math:`S_S`, candidate :math:`S_C` and
   independent :math:`S_I` nodes (50/25/25).
3. Models :math:`f` are trained on :math:`S_S \cup S_C` and models :math:`g` on :math:`S_S \cup S_I`,
   each with ``num_seeds`` seeds, all validated on the same val nodes; each keeps its best-validation
   checkpoint (:func:`~graphbench.analysis.subset_training.train_on_nodes`; ``checkpoint=last``: the
   last epoch's weights instead).
4. The memorization score of node :math:`v` with label :math:`y_v` is

   .. math:: \mathrm{mem}(v) = \mathbb{E}_f[p_f(y_v \mid v)] - \mathbb{E}_g[p_g(y_v \mid v)]

   (:math:`p` the softmax probability, the expectations the means over the seeds), and the
   memorization rate of a node set is the share of its nodes with :math:`\mathrm{mem}(v) > \tau`. On
   :math:`S_C` it measures memorization; on a random set of test nodes of the same size (seen by
   neither model) it is the control.

Writes ``memorization.csv`` (one row per node of :math:`S_S`, :math:`S_C`, :math:`S_I` and the control:
node, set, label, mem, degree, LDS, p_f, p_g), the summary in ``results.json`` (``metrics``:
``memorization/rate`` on :math:`S_C`, ``memorization/rate_control``, the mean scores per set,
``test/accuracy_f`` and ``test/accuracy_g`` averaged over seeds, the mean LDS of memorized and other
candidates) and ``memorization_hist.png``. Any one-graph node-level dataset, model and
hyper-parameters of the usual config groups; with ``+transform=rewire_feature_similarity`` the models
train on the rewired graph.

The defaults follow the protocol as the paper states it; three knobs give the study's code instead
(``SBM/main_syncora.py``, ``SBM/train.py``; ``experiment=ncmemo/gcn`` sets all three):

* ``checkpoint``: ``best`` keeps each model's best-validation weights; ``last`` the last epoch's, which
  the code's ``state_dict()`` reference ends up holding. On heterophilic graphs the best validation
  epoch comes early, before the models fit their training labels, so ``best`` finds little
  memorization where ``last`` finds the study's inverse relation to homophily.
* ``subset_order``: ``shuffled`` draws :math:`S_S/S_C/S_I` and the control at random; ``index`` takes
  them in node-index order, as the code does (``get_node_splits``: the training nodes sorted by index,
  the first half shared, then candidate, then independent; the control the first ``|S_C|`` test nodes).
  Where node order follows the label, as in syn-cora's second half, :math:`S_C` and :math:`S_I` then
  differ in their class mix.
* ``init``: ``shared`` trains :math:`f` and :math:`g` of a seed from the same initial weights, so that
  they differ only by their training nodes; ``independent`` gives each its own (:func:`model_seeds`), as
  the code does, which builds :math:`g` after training :math:`f` (``SBM/train.py``).
* ``scored_seeds``: ``all`` averages the probabilities of all seeds' models; ``last`` scores the last
  seed's :math:`f` and :math:`g` only, as the code does (``train_models`` returns the models of its last
  seed, and ``calculate_node_memorization_score`` scores those).
"""

from __future__ import annotations

import csv
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig
from torch import Tensor
from torch_geometric.utils import degree, to_undirected

from graphbench.analysis.label_disagreement import label_disagreement
from graphbench.analysis.subset_training import train_on_nodes
from graphbench.data.datamodules.node_level import NodeLevelDataModule
from graphbench.data.splits import random_split_masks, stratified_split_masks
from graphbench.run.loggers import SafeWandbLogger
from graphbench.vocabulary.errors import ConfigError

log = logging.getLogger(__name__)

CSV_FILENAME: str = "memorization.csv"
HISTOGRAM_FILENAME: str = "memorization_hist.png"
#: the node sets of the CSV, in order: shared, candidate, independent, and the test-node control
SETS: tuple[str, ...] = ("shared", "candidate", "independent", "control")
CSV_COLUMNS: tuple[str, ...] = ("node", "set", "label", "mem", "degree", "LDS", "p_f", "p_g")


@dataclass(frozen=True)
class MemorizationSets:
    """Node indices (sorted) of the protocol's sets."""

    shared: Tensor
    candidate: Tensor
    independent: Tensor
    control: Tensor
    val: Tensor
    test: Tensor

    def of(self, name: str) -> Tensor:
        return getattr(self, name)


@dataclass(frozen=True)
class MemorizationProtocol:
    """The knobs of ``conf/task/memorization.yaml`` (see :func:`run_memorization`)."""

    tau: float
    num_seeds: int
    split_fractions: tuple[float, float, float]
    subset_fractions: tuple[float, float, float]
    stratified: bool
    knn_k: int
    checkpoint: str
    plots: bool
    subset_order: str = "shuffled"
    scored_seeds: str = "all"
    init: str = "shared"


#: how the protocol's node subsets are taken: drawn at random, or in node-index order (the study's code)
SUBSET_ORDERS: tuple[str, ...] = ("shuffled", "index")
#: which seeds' models the scores use: all of them (mean probabilities), or the last seed's (the study's code)
SCORED_SEEDS: tuple[str, ...] = ("all", "last")
#: how f and g of one seed start: from the same initial weights (and dropout stream), or each from its
#: own (the study's code builds g after training f, from the random stream f left)
INITS: tuple[str, ...] = ("shared", "independent")
#: under ``init=independent``, g of seed ``s`` trains with seed ``s + G_SEED_OFFSET``: a seed no f of a
#: replicate below a million seeds uses
G_SEED_OFFSET: int = 1_000_000


def check_fractions(fractions: Any, what: str) -> tuple[float, float, float]:
    values = tuple(float(f) for f in fractions)
    if len(values) != 3 or any(f <= 0 for f in values) or abs(sum(values) - 1.0) > 1e-6:
        raise ConfigError(f"task.{what} must be three positive fractions summing to 1, got {list(fractions)}")
    return values  # type: ignore[return-value]


def memorization_sets(
    labels: Tensor,
    split_fractions: tuple[float, float, float],
    subset_fractions: tuple[float, float, float],
    seed: int,
    stratified: bool = True,
    order: str = "shuffled",
) -> MemorizationSets:
    """The protocol's node sets, deterministic given ``seed``: a train/val/test split (per class with
    :func:`~graphbench.data.splits.stratified_split_masks`, else uniformly), the training nodes
    shuffled into :math:`S_S` (``int(a n)`` nodes), :math:`S_C` (``int(b n)``) and :math:`S_I` (the rest),
    and the control: ``|S_C|`` test nodes drawn at random. ``order="index"`` takes the training nodes and
    the control's test nodes in increasing node index instead of shuffled (the study's code)."""
    split_fractions = check_fractions(split_fractions, "split_fractions")
    subset_fractions = check_fractions(subset_fractions, "subset_fractions")
    if order not in SUBSET_ORDERS:
        raise ConfigError(f"task.subset_order={order!r} is not valid; valid: {list(SUBSET_ORDERS)}")
    n = labels.numel()
    if stratified:
        masks = stratified_split_masks(labels, split_fractions, seed)
    else:
        masks = random_split_masks(n, split_fractions, seed)
    generator = torch.Generator().manual_seed(int(seed))
    train = masks["train_mask"].nonzero().view(-1)
    if order == "shuffled":
        train = train[torch.randperm(len(train), generator=generator)]
    n_shared, n_candidate = int(subset_fractions[0] * len(train)), int(subset_fractions[1] * len(train))
    test = masks["test_mask"].nonzero().view(-1)
    if n_candidate < 1 or n_shared < 1 or len(train) - n_shared - n_candidate < 1:
        raise ConfigError(
            f"{len(train)} training nodes are too few to split into shared/candidate/independent sets {list(subset_fractions)}"
        )
    if len(test) < n_candidate:
        raise ConfigError(f"the control needs {n_candidate} test nodes (|S_C|), the split has {len(test)}")
    control = test[torch.randperm(len(test), generator=generator)[:n_candidate]] if order == "shuffled" else test[:n_candidate]
    return MemorizationSets(
        shared=train[:n_shared].sort().values,
        candidate=train[n_shared : n_shared + n_candidate].sort().values,
        independent=train[n_shared + n_candidate :].sort().values,
        control=control.sort().values,
        val=masks["val_mask"].nonzero().view(-1),
        test=test,
    )


def true_label_probability(probabilities: Tensor, labels: Tensor) -> Tensor:
    """:math:`p(y_v \\mid v)` for every node: ``probabilities[..., v, labels[v]]`` (any leading dims)."""
    index = labels.long().view(*([1] * (probabilities.dim() - 2)), -1, 1).expand(*probabilities.shape[:-1], 1)
    return probabilities.gather(-1, index).squeeze(-1)


def memorization_scores(probs_f: Tensor, probs_g: Tensor, labels: Tensor) -> Tensor:
    """:math:`\\mathrm{mem}(v) = \\mathbb{E}_f[p_f(y_v|v)] - \\mathbb{E}_g[p_g(y_v|v)]` for every node, from
    the softmax outputs of the seeds' models ``[seeds, N, C]`` (or one model's ``[N, C]``)."""
    p_f = true_label_probability(probs_f, labels)
    p_g = true_label_probability(probs_g, labels)
    if p_f.dim() == 2:
        p_f, p_g = p_f.mean(dim=0), p_g.mean(dim=0)
    return p_f - p_g


def memorization_rate(scores: Tensor, tau: float) -> float:
    """The share of nodes whose score exceeds ``tau`` (strictly): :math:`\\frac{1}{|S|}\\sum_{v \\in S} 1[\\mathrm{mem}(v) > \\tau]`."""
    if scores.numel() == 0:
        return float("nan")
    return float((scores > tau).float().mean())


def model_seeds(seed: int, init: str) -> dict[str, int]:
    """The seeds :math:`f` and :math:`g` of ``seed`` train with (their initial weights, dropout masks and
    batches): ``seed`` for both under ``init=shared``, ``seed`` and ``seed +`` :data:`G_SEED_OFFSET` under
    ``init=independent``."""
    if init not in INITS:
        raise ConfigError(f"task.init={init!r} is not valid; valid: {list(INITS)}")
    return {"f": seed, "g": seed if init == "shared" else seed + G_SEED_OFFSET}


def train_models(
    cfg: DictConfig, datamodule: NodeLevelDataModule, sets: MemorizationSets, protocol: MemorizationProtocol, output_dir: Path
) -> tuple[Tensor, Tensor]:
    r"""Step 3: for each seed ``cfg.seed * num_seeds + i`` (:math:`i <` ``num_seeds``), a model :math:`f` trained
    on :math:`S_S \cup S_C` and a model :math:`g` on :math:`S_S \cup S_I` (their seeds: :func:`model_seeds`
    of ``protocol.init``), both validated on the val nodes
    (:func:`~graphbench.analysis.subset_training.train_on_nodes`, run directories
    ``model_{f,g}_seed<seed>`` under ``output_dir``). Returns the softmax outputs of the :math:`f` and the
    :math:`g` models, each ``[num_seeds, N, C]``."""
    assert datamodule.graph is not None
    labels = datamodule.graph.y.view(-1)
    n, num_seeds = labels.numel(), protocol.num_seeds

    def mask(*parts: Tensor) -> Tensor:
        out = torch.zeros(n, dtype=torch.bool, device=labels.device)
        for part in parts:
            out[part] = True
        return out

    val_mask = mask(sets.val)
    probs: dict[str, list[Tensor]] = {"f": [], "g": []}
    for i in range(num_seeds):
        seed = int(cfg.seed) * num_seeds + i
        seeds = model_seeds(seed, protocol.init)
        for name, train_nodes in (("f", mask(sets.shared, sets.candidate)), ("g", mask(sets.shared, sets.independent))):
            model_seed = seeds[name]
            log.info("training model %s, seed %d (%d nodes)", name, model_seed, int(train_nodes.sum()))
            run_dir = output_dir / f"model_{name}_seed{seed}"
            probs[name].append(train_on_nodes(cfg, train_nodes, val_mask, model_seed, run_dir, datamodule, protocol.checkpoint))
    return torch.stack(probs["f"]), torch.stack(probs["g"])


def node_rows(
    x: Tensor,
    edge_index: Tensor,
    labels: Tensor,
    sets: MemorizationSets,
    probs_f: Tensor,
    probs_g: Tensor,
    knn_k: int,
) -> tuple[list[dict[str, Any]], dict[str, Tensor]]:
    r"""One :data:`CSV_COLUMNS` row per node of every set of :data:`SETS`: its memorization score
    (:func:`memorization_scores`), degree in the undirected graph, label disagreement score against
    :math:`S_S \cup S_C` (:func:`~graphbench.analysis.label_disagreement.label_disagreement`, ``knn_k``
    neighbours) and seed-mean true-label probabilities under :math:`f` and :math:`g`. Also returns each
    set's LDS values, in the set's node order."""
    n = labels.numel()
    mem = memorization_scores(probs_f, probs_g, labels)
    p_f = true_label_probability(probs_f, labels).mean(dim=0)
    p_g = true_label_probability(probs_g, labels).mean(dim=0)
    reference = torch.cat([sets.shared, sets.candidate])
    node_degree = degree(to_undirected(edge_index, num_nodes=n)[0], num_nodes=n).long()
    rows: list[dict[str, Any]] = []
    lds_of: dict[str, Tensor] = {}
    for name in SETS:
        nodes = sets.of(name)
        lds_of[name] = label_disagreement(x, labels, nodes, reference, knn_k)
        for j, v in enumerate(nodes.tolist()):
            rows.append(
                {
                    "node": v,
                    "set": name,
                    "label": int(labels[v]),
                    "mem": float(mem[v]),
                    "degree": int(node_degree[v]),
                    "LDS": float(lds_of[name][j]),
                    "p_f": float(p_f[v]),
                    "p_g": float(p_g[v]),
                }
            )
    return rows, lds_of


def scored_probabilities(probs_f: Tensor, probs_g: Tensor, scored_seeds: str) -> tuple[Tensor, Tensor]:
    """The seeds' outputs ``[seeds, N, C]`` the scores use: all of them (``all``), or the last seed's
    ``[1, N, C]`` (``last``, the study's code)."""
    if scored_seeds not in SCORED_SEEDS:
        raise ConfigError(f"task.scored_seeds={scored_seeds!r} is not valid; valid: {list(SCORED_SEEDS)}")
    return (probs_f, probs_g) if scored_seeds == "all" else (probs_f[-1:], probs_g[-1:])


def memorization_metrics(
    probs_f: Tensor,
    probs_g: Tensor,
    labels: Tensor,
    sets: MemorizationSets,
    lds_of: dict[str, Tensor],
    tau: float,
    scored_seeds: str = "all",
) -> dict[str, float | None]:
    """``results.json``'s metrics: the memorization rate above ``tau`` on :math:`S_C` and on the control, the
    mean LDS of memorized and other candidates (``None`` for an empty group), the mean score of every set
    (all from the models :func:`scored_probabilities` picks), and the test accuracy (mean and population
    std over all the seeds) and val accuracy of :math:`f` and :math:`g`."""
    all_f, all_g = probs_f, probs_g
    probs_f, probs_g = scored_probabilities(probs_f, probs_g, scored_seeds)
    mem = memorization_scores(probs_f, probs_g, labels)
    candidate_mem = mem[sets.candidate]
    memorized = candidate_mem > tau
    metrics: dict[str, float | None] = {
        "memorization/rate": memorization_rate(candidate_mem, tau),
        "memorization/rate_control": memorization_rate(mem[sets.control], tau),
        "lds/candidate_memorized": mean_or_none(lds_of["candidate"][memorized]),
        "lds/candidate_not_memorized": mean_or_none(lds_of["candidate"][~memorized]),
    }
    for name in SETS:
        metrics[f"memorization/mean_{name}"] = mean_or_none(mem[sets.of(name)])
    for name, stacked in (("f", all_f), ("g", all_g)):
        per_seed = torch.tensor([accuracy(p, labels, sets.test) for p in stacked])
        metrics[f"test/accuracy_{name}"] = float(per_seed.mean())
        metrics[f"test/accuracy_{name}_std"] = float(per_seed.std(unbiased=False))
        metrics[f"val/accuracy_{name}"] = float(torch.tensor([accuracy(p, labels, sets.val) for p in stacked]).mean())
    return metrics


def accuracy(probabilities: Tensor, labels: Tensor, nodes: Tensor) -> float:
    return float((probabilities[nodes].argmax(dim=-1) == labels[nodes]).float().mean())


def plot_title(cfg: DictConfig) -> str:
    homophily = cfg.dataset.get("homophily")
    where = f"{cfg.dataset.name}" + (f" h={homophily}" if homophily is not None else "")
    return f"{cfg.model.name} on {where}"


def mean_or_none(values: Tensor) -> float | None:
    return float(values.float().mean()) if values.numel() else None


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    """``memorization.csv``: :data:`CSV_COLUMNS`, one row per node."""
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(CSV_COLUMNS))
        writer.writeheader()
        writer.writerows(rows)


def log_image(loggers: list[Any], key: str, path: Path) -> None:
    """Log a PNG to the W&B loggers among ``loggers``; a logging failure is reported and never ends the run."""
    for lg in loggers:
        if isinstance(lg, SafeWandbLogger):
            try:
                lg.log_image(key=key, images=[str(path)])
            except Exception as exc:
                log.warning("could not log %s to W&B (%s: %s)", path.name, type(exc).__name__, exc)
