"""Full-batch training of the configured model on one labelled graph with given node masks: the
inner loop of IGB's protocol (select the epoch on train/validation, retrain on all labeled nodes for
that many epochs, test), of ``task=iid_eval`` (once per subgraph) and of the ValidUtil probe
(hundreds of short fits).

Why not Lightning, as :func:`graphbench.tasks.train.train` and
:func:`graphbench.analysis.subset_training.train_on_nodes` use: these protocols fit on graphs that
are not the dataset's (subgraphs, relabelled graphs), retrain for a fixed number of epochs, and fit
hundreds of times on graphs of a few hundred nodes, where a Trainer's per-fit set-up costs more than
the fit. The model, its width, the optimizer, the loss and the consistency term are the composed
config's, built as ``train`` builds them (:func:`graphbench.build.model.network_builder`,
:mod:`graphbench.build.task_module`).
"""

from __future__ import annotations

import copy
import functools
import itertools
import logging
import statistics
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from omegaconf import DictConfig, ListConfig, OmegaConf, open_dict
from torch import Tensor, nn
from torch.func import functional_call, vmap
from torch.optim import SGD, Adam, AdamW, Optimizer
from torch_geometric.data import Data

from graphbench.build.model import network_builder, network_width
from graphbench.build.task_module import build_consistency, build_loss, build_optimizer
from graphbench.data.info import DatasetInfo
from graphbench.modules.losses import ConsistencyLoss
from graphbench.vocabulary.errors import ConfigError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FullBatchRecipe:
    """What a fit needs from the config: the network factory and width, optimizer, loss and epochs,
    GRAND's consistency regularization where the model has one (``model.consistency``:
    :func:`graphbench.build.task_module.build_consistency`, as for ``task=train``), and whether sparse raw
    features may enter as a CSR matrix (``speedups=auto``: :func:`sparse_inputs`)."""

    make_network: Callable[[int], nn.Module]
    hidden_dim: int
    optimizer: Callable[[Iterable[nn.Parameter]], Optimizer]
    loss: Callable[[Tensor, Tensor], Tensor]
    max_epochs: int
    consistency: ConsistencyLoss | None = None
    sparse_features: bool = False

    @classmethod
    def from_config(cls, cfg: DictConfig, info: DatasetInfo) -> FullBatchRecipe:
        if info.level != "node" or info.task_type != "multiclass" or info.metric != "accuracy":
            raise ConfigError(
                f"dataset={cfg.dataset.name} is a {info.level}-level {info.task_type} task scored by {info.metric}; "
                "IGB's protocols need node classification scored by accuracy (e.g. cora, citeseer)"
            )
        if cfg.scheduler.get("_target_"):
            raise ConfigError(
                f"scheduler={cfg.scheduler.get('name')}: IGB's protocols train for a fixed number of epochs without a "
                "learning-rate schedule; set scheduler=none (the planetoid experiments do)"
            )
        make_network = network_builder(cfg, info)
        hidden_dim = network_width(cfg, make_network)
        loss = build_loss(cfg)
        if loss is None:
            raise ConfigError(f"dataset={cfg.dataset.name} has no module.loss: IGB's fits train on the dataset's loss")
        return cls(
            make_network=make_network,
            hidden_dim=hidden_dim,
            optimizer=build_optimizer(cfg),
            loss=loss,
            max_epochs=int(cfg.trainer.max_epochs),
            consistency=build_consistency(cfg, info),
            sparse_features=bool(cfg.speedups.enabled),
        )

    @property
    def passes(self) -> int:
        """Forward passes per training step: GRAND's :math:`S` augmentations, else one."""
        return 1 if self.consistency is None else self.consistency.num_augmentations

    def objective(self, logits: Sequence[Tensor], train_index: Tensor, targets: Tensor) -> Tensor:
        r"""The training loss of one step from the logits of its :attr:`passes` forward passes over the
        whole graph: ``loss`` on the rows ``train_index``; with ``consistency`` GRAND's objective, as
        :class:`~graphbench.modules.task_module.GraphTaskModule` trains it, :math:`\frac1S \sum_s
        L(Z^{(s)}_{\text{train}}, y) + \lambda \mathcal L_{\mathrm{con}}(Z^{(1..S)})` over all nodes."""
        if len(logits) != self.passes:
            raise ValueError(f"the objective takes {self.passes} passes' logits, got {len(logits)}")
        supervised = torch.stack([self.loss(z.index_select(0, train_index), targets) for z in logits]).mean()
        return supervised if self.consistency is None else supervised + self.consistency(list(logits))


@dataclass(frozen=True)
class FitResult:
    """Accuracies of one fit and the predicted class of every node with the kept weights.
    ``epochs``: the epochs trained up to the kept weights (the best validation epoch when
    selecting, else all of them)."""

    epochs: int
    train: float
    val: float
    test: float
    predictions: Tensor


def accuracy(logits: Tensor, labels: Tensor, mask: Tensor) -> float:
    """Share of the masked nodes whose arg-max class is their label (NaN for an empty mask)."""
    if not bool(mask.any()):
        return float("nan")
    return float((logits[mask].argmax(dim=-1) == labels[mask]).float().mean())


def _evaluate(network: nn.Module, graph: Data) -> tuple[Tensor, float, float, float]:
    """Predicted classes (eval mode) and the train, val and test accuracies."""
    network.eval()
    with torch.no_grad():
        logits = network(graph)
    network.train()
    train, val, test = (accuracy(logits, graph.y, graph[f"{split}_mask"]) for split in ("train", "val", "test"))
    return logits.argmax(dim=-1), train, val, test


#: the largest share of non-zero features for which :func:`sparse_inputs` tries a CSR feature matrix
SPARSE_FEATURE_DENSITY: float = 0.1


def sparse_inputs(recipe: FullBatchRecipe, graph: Data, forward: Callable[[Data], Any]) -> Data:
    r"""``graph``, or a shallow copy whose ``x`` is a sparse CSR matrix: when ``recipe.sparse_features``,
    ``x`` is a 2-D float matrix with at most :data:`SPARSE_FEATURE_DENSITY` of its entries non-zero
    (Planetoid's bag-of-words: Cora 1.3%, CiteSeer 0.9%), and ``forward`` (a network, or the batched
    networks of :func:`fit_many`) runs on it. Layers whose first operation on ``x`` is a linear map (GCN,
    APPNP, MixHop, an MLP) then take it through one sparse product
    (:func:`graphbench.speedups.linear.linear`): the same fits, up to float summation order, at a
    fraction of the dense product's cost. Others (a first aggregation of raw features, input
    dropout) raise on the trial forward pass and keep the dense matrix. The trial runs in training
    mode without gradients, its random draws undone, so the fit's dropout masks are the dense fit's."""
    x = graph.x
    if not recipe.sparse_features or x is None or x.dim() != 2 or not x.is_floating_point() or x.numel() == 0:
        return graph
    if float(torch.count_nonzero(x)) > SPARSE_FEATURE_DENSITY * x.numel():
        return graph
    trial = copy.copy(graph)
    with warnings.catch_warnings():  # "sparse CSR support is in beta": the products are tested
        warnings.simplefilter("ignore")
        trial.x = x.to_sparse_csr()
    devices = [x.device] if x.is_cuda else []
    with torch.random.fork_rng(devices=devices), torch.no_grad():
        try:
            forward(trial)
        except (RuntimeError, NotImplementedError, TypeError) as error:
            _note_dense_features(_first_sentence(str(error)))
            return graph
    return trial


def _first_sentence(message: str) -> str:
    """The first line of an error message, cut at its first full stop (PyTorch's dispatcher errors
    go on to list every backend)."""
    return message.split("\n")[0].split(". ")[0]


@functools.cache
def _note_dense_features(reason: str) -> None:
    """Logs a fallback to dense features once per process and reason, at debug level (the fit is the
    same either way): a grid or a probe refused for the same reason thousands of times says so once."""
    log.debug("fit: this model does not take a sparse feature matrix, so it trains on the dense one (%s)", reason)


def fit(
    recipe: FullBatchRecipe, graph: Data, seed: int, *, select: bool, epochs: int | None = None, labels: Tensor | None = None
) -> FitResult:
    """Train a freshly initialised network (weights and dropout seeded by ``seed``) on
    ``graph.train_mask``.

    ``select=True``: ``epochs`` (default ``recipe.max_epochs``) epochs, validation accuracy after each,
    and the weights of the first best-validation epoch are the ones scored (the best-checkpoint rule of
    :func:`graphbench.tasks.train.train`). ``select=False``: exactly ``epochs`` epochs, no validation, no early
    stopping; the last weights are scored. ``labels`` replaces ``graph.y`` as the training targets
    (ValidUtil's pseudo-labels); accuracies are always against ``graph.y``."""
    epochs = recipe.max_epochs if epochs is None else int(epochs)
    if epochs < 1:
        raise ConfigError(f"a fit needs at least one epoch, got {epochs}")
    torch.manual_seed(seed)
    network = recipe.make_network(recipe.hidden_dim).to(graph.y.device)
    network.train()
    graph = sparse_inputs(recipe, graph, network)
    optimizer = recipe.optimizer(network.parameters())
    train_index = graph.train_mask.nonzero().view(-1)
    targets = (graph.y if labels is None else labels).index_select(0, train_index)
    best: tuple[float, int, dict[str, Tensor]] | None = None
    for epoch in range(1, epochs + 1):
        optimizer.zero_grad()
        loss = recipe.objective([network(graph) for _ in range(recipe.passes)], train_index, targets)
        loss.backward()
        optimizer.step()
        if select:
            val = _evaluate(network, graph)[2]
            if best is None or val > best[0]:
                best = (val, epoch, copy.deepcopy(network.state_dict()))
    if best is not None:
        network.load_state_dict(best[2])
    predictions, train, val, test = _evaluate(network, graph)
    return FitResult(best[1] if best is not None else epochs, train, val, test, predictions)


def fit_min_val_loss(recipe: FullBatchRecipe, graph: Data, labels: Tensor, patience: int) -> FitResult:
    r"""One run of the IGB code's final model (THUDM/IGB@0731be2b8f72f02205fb884a83c27c6be88aea54,
    ``validutil/train_eval.py``, ``run``): a network initialised from the running generator (no reseeding:
    consecutive runs draw fresh weights, as the code's ``reset_parameters`` in one seeded process) trains on
    ``graph.train_mask`` with targets ``labels`` for up to :math:`T` = ``recipe.max_epochs`` epochs. After each
    epoch :math:`t`, in evaluation mode, the validation loss :math:`L_t` = ``recipe.loss`` of the
    ``graph.val_mask`` rows against ``labels`` (the code's pseudo-labels: its ``data.y`` keeps them) is
    recorded; the result is the first epoch of the smallest :math:`L_t`, with its accuracies against
    ``graph.y``. Once :math:`t > \lfloor T/2 \rfloor`, the run stops after the first epoch with
    :math:`L_t > \frac{1}{p}\sum_{i=1}^{p} L_{t-i}`, :math:`p` = ``patience`` (``--early_stopping``; 0: never)."""
    network = recipe.make_network(recipe.hidden_dim).to(graph.y.device)
    network.train()
    graph = sparse_inputs(recipe, graph, network)
    optimizer = recipe.optimizer(network.parameters())
    train_index = graph.train_mask.nonzero().view(-1)
    val_index = graph.val_mask.nonzero().view(-1)
    targets = labels.index_select(0, train_index)
    val_targets = labels.index_select(0, val_index)
    best: tuple[float, FitResult] | None = None
    history: list[float] = []
    for epoch in range(1, recipe.max_epochs + 1):
        optimizer.zero_grad()
        loss = recipe.objective([network(graph) for _ in range(recipe.passes)], train_index, targets)
        loss.backward()
        optimizer.step()
        network.eval()
        with torch.no_grad():
            logits = network(graph)
        network.train()
        val_loss = float(recipe.loss(logits.index_select(0, val_index), val_targets))
        if best is None or val_loss < best[0]:
            train, val, test = (accuracy(logits, graph.y, graph[f"{split}_mask"]) for split in ("train", "val", "test"))
            best = (val_loss, FitResult(epoch, train, val, test, logits.argmax(dim=-1)))
        previous = history[-patience:] if patience > 0 else []
        history.append(val_loss)
        if previous and epoch > recipe.max_epochs // 2 and val_loss > statistics.fmean(previous):
            break
    assert best is not None
    return best[1]


def fit_runs(recipe: FullBatchRecipe, graph: Data, seed: int, labels: Tensor, *, runs: int, patience: int) -> list[FitResult]:
    """``runs`` runs of :func:`fit_min_val_loss` after one ``torch.manual_seed(seed)``, as the IGB code's
    ``train_eval.run`` repeats them in one seeded process (``final_scripts.sh``: ``--runs 10``)."""
    if runs < 1:
        raise ConfigError(f"task.final.runs={runs} must be a positive number of runs")
    torch.manual_seed(seed)
    return [fit_min_val_loss(recipe, graph, labels, patience) for _ in range(runs)]


#: optimizers whose update of a parameter entry reads only that entry's own gradient and state, so that
#: one optimizer over stacked copies updates each copy exactly as its own optimizer would
ELEMENTWISE_OPTIMIZERS: tuple[type[Optimizer], ...] = (SGD, Adam, AdamW)


def fit_many(recipe: FullBatchRecipe, graph: Data, seed: int, labels: Tensor, *, epochs: int | None = None) -> list[FitResult]:
    r"""``[fit(recipe, graph, seed, select=False, epochs=epochs, labels=y) for y in labels]`` (``labels``:
    ``[K, N]``, one target vector per fit), trained at once: the K networks are copies of the one
    network that ``seed`` initialises, their parameters stacked along a new first dimension
    (:math:`\theta \in \mathbb{R}^{K \times \dots}`) and run by :func:`torch.func.vmap` over
    :func:`torch.func.functional_call`. The loss is :math:`\sum_k L(f_{\theta_k}(G), y_k)`, so the
    gradient of copy :math:`k` is that of its own loss, and the optimizer (one of
    :data:`ELEMENTWISE_OPTIMIZERS`, whose update of an entry reads only that entry) steps each copy as
    its own optimizer would. Dropout draws one mask for all copies (``randomness="same"``), the mask that
    each sequential fit, seeded alike, draws. Equal to the sequential fits up to float rounding (batched
    products sum in another order); ValidUtil's tuning fits, one per class of a validation node, run
    this way (the IGB code runs them one after the other)."""
    epochs = recipe.max_epochs if epochs is None else int(epochs)
    if epochs < 1:
        raise ConfigError(f"a fit needs at least one epoch, got {epochs}")
    if labels.dim() != 2 or labels.size(1) != graph.num_nodes:
        raise ValueError(
            f"fit_many: labels must be [K, {graph.num_nodes}] (one target per node and fit), got {list(labels.shape)}"
        )
    torch.manual_seed(seed)
    network = recipe.make_network(recipe.hidden_dim).to(graph.y.device)
    count = labels.size(0)
    params = {
        name: p.detach().unsqueeze(0).repeat(count, *(1,) * p.dim()).requires_grad_() for name, p in network.named_parameters()
    }
    buffers = dict(network.named_buffers())
    optimizer = recipe.optimizer(list(params.values()))
    if not isinstance(optimizer, ELEMENTWISE_OPTIMIZERS):
        names = ", ".join(o.__name__ for o in ELEMENTWISE_OPTIMIZERS)
        raise ConfigError(f"optimizer={type(optimizer).__name__}: batched fits need an element-wise optimizer ({names})")
    network.train()
    batched = vmap(lambda p, g: functional_call(network, (p, buffers), (g,)), in_dims=(0, None), randomness="same")
    graph = sparse_inputs(recipe, graph, lambda g: batched(params, g))
    train_index = graph.train_mask.nonzero().view(-1)
    targets = labels.index_select(1, train_index)
    objective = vmap(lambda passes, y: recipe.objective(passes.unbind(0), train_index, y))
    for _ in range(epochs):
        optimizer.zero_grad()
        passes = torch.stack([batched(params, graph) for _ in range(recipe.passes)], dim=1)  # [K, S, N, C]
        loss = objective(passes, targets).sum()
        loss.backward()
        optimizer.step()
    network.eval()
    with torch.no_grad():
        logits = batched(params, graph)
    network.train()
    results = []
    for k in range(count):
        train, val, test = (accuracy(logits[k], graph.y, graph[f"{split}_mask"]) for split in ("train", "val", "test"))
        results.append(FitResult(epochs, train, val, test, logits[k].argmax(dim=-1)))
    return results


def retrain(recipe: FullBatchRecipe, graph: Data, seed: int, epochs: int) -> FitResult:
    """IGB's retraining: from the same initial weights, on all labeled nodes (train and validation),
    for exactly ``epochs`` epochs without early stopping; the last weights are tested on ``test_mask``.
    The result's ``val`` is an accuracy on nodes it trained on."""
    labeled = graph.clone()
    labeled.train_mask = graph.train_mask | graph.val_mask
    return fit(recipe, labeled, seed, select=False, epochs=epochs)


def igb_fit(recipe: FullBatchRecipe, graph: Data, seed: int) -> tuple[FitResult, FitResult]:
    """IGB's protocol on one graph for one setting: select the number of epochs on ``train_mask`` /
    ``val_mask`` (:func:`fit` with ``select=True``), then :func:`retrain` for that many epochs.
    Returns (selection fit, retrained fit)."""
    selection = fit(recipe, graph, seed, select=True)
    return selection, retrain(recipe, graph, seed, selection.epochs)


def with_overrides(cfg: DictConfig, overrides: Mapping[str, Any]) -> DictConfig:
    """A copy of ``cfg`` with each dotted key of ``overrides`` (e.g. ``optimizer.lr``) set to its value.
    A key the config lacks is added (the network's builder refuses a keyword its model does not take)."""
    point = cfg.copy()
    with open_dict(point):
        for key, value in overrides.items():
            OmegaConf.update(point, key, value, merge=False, force_add=True)
    return point


def flatten(node: Mapping[str, Any] | DictConfig | None, prefix: str = "") -> dict[str, Any]:
    """``{model: {dropout: 0}}`` -> ``{"model.dropout": 0}``: the leaves of a nested mapping by dotted key."""
    flat: dict[str, Any] = {}
    for key, value in (node or {}).items():
        if isinstance(value, (Mapping, DictConfig)):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = OmegaConf.to_object(value) if isinstance(value, ListConfig) else value
    return flat


def grid_points(grid: Mapping[str, Any] | DictConfig | None, what: str = "task.grid") -> list[dict[str, Any]]:
    """Every combination of a grid of config values, in the order the grid lists them (the last key
    varies fastest, as :func:`itertools.product`). ``grid`` nests like the config and ends in lists,
    e.g. ``{optimizer: {lr: [0.01, 0.05]}, model: {hidden_dim: [16, 64]}}``; no grid is one point, the
    composed config itself."""
    flat = flatten(grid)
    for key, values in flat.items():
        if not isinstance(values, list) or not values:
            raise ConfigError(f"{what}.{key}={values!r}: every grid entry is a non-empty list of values, e.g. [0.01, 0.05]")
    return [dict(zip(flat, combination, strict=True)) for combination in itertools.product(*flat.values())]


@dataclass(frozen=True)
class GridChoice:
    """The grid search's answer: the chosen ``point`` (its index ``index``), its recipe, its selection fit
    on every graph, and the mean validation accuracy of every point (in grid order)."""

    index: int
    point: dict[str, Any]
    recipe: FullBatchRecipe
    selections: list[FitResult]
    mean_val: list[float]


def grid_search(
    points: Sequence[dict[str, Any]], recipes: Sequence[FullBatchRecipe], graphs: Sequence[Data], seed: int
) -> GridChoice:
    """IGB's protocol step 2 (the IGB code's ``main.py``): every setting is fitted on every graph's
    ``train_mask`` with its best validation epoch kept (:func:`fit`, ``select=True``), and the setting
    with the highest validation accuracy averaged over the graphs wins (the first on a tie, as
    ``np.argmax``). Each graph's own selected epoch count is then the one to :func:`retrain` for."""
    if len(points) != len(recipes) or not recipes or not graphs:
        raise ValueError(
            f"grid_search needs one recipe per point and at least one graph, got {len(points)} points, "
            f"{len(recipes)} recipes and {len(graphs)} graphs"
        )
    best: tuple[int, list[FitResult]] | None = None
    mean_val: list[float] = []
    for index, recipe in enumerate(recipes):
        selections = [fit(recipe, graph, seed, select=True) for graph in graphs]
        mean_val.append(statistics.fmean(s.val for s in selections))
        if best is None or mean_val[-1] > mean_val[best[0]]:
            best = (index, selections)
    assert best is not None
    return GridChoice(best[0], dict(points[best[0]]), recipes[best[0]], best[1], mean_val)


def grid_metrics(choice: GridChoice) -> dict[str, float]:
    """``results.json`` metrics of a grid search: ``grid/<key>`` the chosen value of every numeric key,
    ``grid/num_points``, ``grid/best_mean_val_accuracy``."""
    chosen = {f"grid/{k}": float(v) for k, v in choice.point.items() if isinstance(v, (int, float))}
    return {
        **chosen,
        "grid/num_points": float(len(choice.mean_val)),
        "grid/best_mean_val_accuracy": choice.mean_val[choice.index],
    }
