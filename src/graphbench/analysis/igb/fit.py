"""Full-batch training of the configured model on one labelled graph with given node masks: the
inner loop of IGB's protocol (select the epoch on train/validation, retrain on all labeled nodes for
that many epochs, test), of ``task=iid_eval`` (once per subgraph) and of the ValidUtil probe
(hundreds of short fits).

Why not Lightning, as :func:`graphbench.train.train` and
:func:`graphbench.analysis.subset_training.train_on_nodes` use: these protocols fit on graphs that
are not the dataset's (subgraphs, relabelled graphs), retrain for a fixed number of epochs, and fit
hundreds of times on graphs of a few hundred nodes, where a Trainer's per-fit set-up costs more than
the fit. The model, its width, the optimizer and the loss are the composed config's, built with
:func:`graphbench.train.network_builder` as ``train`` builds them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch
from omegaconf import DictConfig
from torch import Tensor, nn
from torch.optim import Optimizer
from torch_geometric.data import Data

from graphbench.errors import ConfigError
from graphbench.info import DatasetInfo
from graphbench.instantiate import METADATA_KEYS, build
from graphbench.train import network_builder, network_width


@dataclass(frozen=True)
class FullBatchRecipe:
    """What a fit needs from the config: the network factory and width, optimizer, loss and epochs."""

    make_network: Callable[[int], nn.Module]
    hidden_dim: int
    optimizer: Callable[[Iterable[nn.Parameter]], Optimizer]
    loss: Callable[[Tensor, Tensor], Tensor]
    max_epochs: int

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
        return cls(
            make_network=make_network,
            hidden_dim=network_width(cfg, make_network),
            optimizer=build(cfg.optimizer, "optimizer", METADATA_KEYS),
            loss=build(cfg.dataset.module.loss, "dataset.module.loss"),
            max_epochs=int(cfg.trainer.max_epochs),
        )


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


def fit(
    recipe: FullBatchRecipe, graph: Data, seed: int, *, select: bool, epochs: int | None = None, labels: Tensor | None = None
) -> FitResult:
    """Train a freshly initialised network (weights and dropout seeded by ``seed``) on
    ``graph.train_mask``.

    ``select=True``: ``epochs`` (default ``recipe.max_epochs``) epochs, validation accuracy after each,
    and the weights of the first best-validation epoch are the ones scored (the best-checkpoint rule of
    :func:`graphbench.train.train`). ``select=False``: exactly ``epochs`` epochs, no validation, no early
    stopping; the last weights are scored. ``labels`` replaces ``graph.y`` as the training targets
    (ValidUtil's pseudo-labels); accuracies are always against ``graph.y``."""
    epochs = recipe.max_epochs if epochs is None else int(epochs)
    if epochs < 1:
        raise ConfigError(f"a fit needs at least one epoch, got {epochs}")
    torch.manual_seed(seed)
    network = recipe.make_network(recipe.hidden_dim)
    optimizer = recipe.optimizer(network.parameters())
    targets = (graph.y if labels is None else labels)[graph.train_mask]
    best: tuple[float, int, dict[str, Tensor]] | None = None
    network.train()
    for epoch in range(1, epochs + 1):
        optimizer.zero_grad()
        loss = recipe.loss(network(graph)[graph.train_mask], targets)
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


def igb_fit(recipe: FullBatchRecipe, graph: Data, seed: int) -> tuple[FitResult, FitResult]:
    """IGB's protocol on one graph: select the number of epochs on ``train_mask`` / ``val_mask``
    (:func:`fit` with ``select=True``), then retrain from the same initial weights on all labeled
    nodes (train and validation) for exactly that many epochs and test the final model on
    ``test_mask``. Returns (selection fit, retrained fit); the retrained fit's ``val`` is an accuracy
    on nodes it trained on."""
    selection = fit(recipe, graph, seed, select=True)
    labeled = graph.clone()
    labeled.train_mask = graph.train_mask | graph.val_mask
    return selection, fit(recipe, labeled, seed, select=False, epochs=selection.epochs)
