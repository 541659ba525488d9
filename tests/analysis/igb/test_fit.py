"""Full-batch fits of IGB's protocols: the batched fits equal the sequential ones, and sparse raw features fit as
the dense matrix does."""

from __future__ import annotations

import dataclasses
import logging
import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig
from torch_geometric.data import Data

from graphbench.analysis.igb import fit as fit_module
from graphbench.analysis.igb.fit import FullBatchRecipe, fit, fit_many, fit_runs, sparse_inputs
from graphbench.analysis.subset_training import node_datamodule
from graphbench.modules.losses import ConsistencyLoss
from graphbench.vocabulary.errors import ConfigError
from tests.data.sources.node.planetoid_fixture import write_planetoid
from tests.paths import REPO


def planetoid_cfg(tmp_path: Path, *extra: str) -> DictConfig:
    write_planetoid(tmp_path / "data", "cora")
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        return compose(
            "config",
            overrides=[
                "experiment=planetoid/cora-gcn",
                "trainer.max_epochs=6",
                "optimizer.lr=0.1",
                f"paths.data_dir={tmp_path / 'data'}",
                f"paths.cache_dir={tmp_path / 'cache'}",
                *extra,
            ],
        )


@pytest.mark.parametrize("dropout", [0.0, 0.5])
def test_fit_many_equals_one_fit_per_label_vector(tmp_path: Path, dropout: float) -> None:
    # speedups=off: the CPU's compiled dropout mask is an autograd.Function that torch.func cannot batch
    cfg = planetoid_cfg(tmp_path, f"model.dropout={dropout}", f"model.input_dropout={dropout}", "speedups=off")
    graph = node_datamodule(cfg).graph
    recipe = FullBatchRecipe.from_config(cfg, node_datamodule(cfg).info)
    graph.train_mask = graph.train_mask | graph.val_mask
    labels = graph.y.repeat(3, 1)
    first_val = int(graph.val_mask.nonzero()[0])
    labels[1, first_val] = (graph.y[first_val] + 1) % 3  # the fixture's three classes
    labels[2, graph.train_mask] = 0  # a fit whose every target is class 0 predicts class 0 everywhere
    batched = fit_many(recipe, graph, seed=3, labels=labels)
    one_by_one = [fit(recipe, graph, seed=3, select=False, labels=y) for y in labels]
    assert [b.epochs for b in batched] == [6, 6, 6]
    for b, s in zip(batched, one_by_one, strict=True):
        assert (b.train, b.val, b.test) == (s.train, s.val, s.test)
        assert torch.equal(b.predictions, s.predictions)
    assert torch.equal(batched[2].predictions, torch.zeros_like(graph.y))


def test_fit_many_refuses_an_optimizer_that_couples_entries(tmp_path: Path) -> None:
    cfg = planetoid_cfg(tmp_path, "optimizer._target_=torch.optim.LBFGS", "~optimizer.weight_decay", "~optimizer.foreach")
    dm = node_datamodule(cfg)
    recipe = FullBatchRecipe.from_config(cfg, dm.info)
    with pytest.raises(ConfigError, match=r"optimizer=LBFGS: batched fits need an element-wise optimizer \(SGD, Adam, AdamW\)"):
        fit_many(recipe, dm.graph, seed=0, labels=dm.graph.y.repeat(2, 1))


def test_fit_many_trains_with_the_cpu_dropout_speedup_switched_on(tmp_path: Path) -> None:
    cfg = planetoid_cfg(tmp_path, "model.dropout=0.5", "speedups=auto")
    dm = node_datamodule(cfg)
    results = fit_many(FullBatchRecipe.from_config(cfg, dm.info), dm.graph, seed=0, labels=dm.graph.y.repeat(2, 1))
    assert [r.epochs for r in results] == [6, 6] and torch.equal(results[0].predictions, results[1].predictions)


def test_sparse_features_fit_as_the_dense_matrix_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the fixture's features are 2 of 6 non-zero: above the CSR threshold, so the test lowers it
    monkeypatch.setattr(fit_module, "SPARSE_FEATURE_DENSITY", 0.5)
    cfg = planetoid_cfg(tmp_path, "model.dropout=0.5", "model.input_dropout=0", "speedups=auto")
    dm = node_datamodule(cfg)
    graph, sparse = dm.graph, FullBatchRecipe.from_config(cfg, dm.info)
    dense = dataclasses.replace(sparse, sparse_features=False)
    assert (
        sparse.sparse_features
        and sparse_inputs(sparse, graph, sparse.make_network(sparse.hidden_dim)).x.layout == torch.sparse_csr
    )
    assert sparse_inputs(dense, graph, dense.make_network(dense.hidden_dim)) is graph
    labels = graph.y.repeat(2, 1)
    labels[1, graph.train_mask] = 0
    for a, b in zip(fit_many(sparse, graph, seed=2, labels=labels), fit_many(dense, graph, seed=2, labels=labels), strict=True):
        assert (a.train, a.val, a.test) == (b.train, b.val, b.test) and torch.equal(a.predictions, b.predictions)
    a, b = fit(sparse, graph, seed=2, select=True), fit(dense, graph, seed=2, select=True)
    assert (a.epochs, a.train, a.val, a.test) == (b.epochs, b.train, b.val, b.test)
    assert graph.x.layout == torch.strided  # the caller's graph keeps its dense matrix


def test_a_model_that_refuses_sparse_features_keeps_the_dense_matrix_and_its_random_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # input dropout draws a mask over x's entries, which a CSR matrix cannot take
    monkeypatch.setattr(fit_module, "SPARSE_FEATURE_DENSITY", 0.5)
    cfg = planetoid_cfg(tmp_path, "model.dropout=0.5", "model.input_dropout=0.5", "speedups=auto")
    dm = node_datamodule(cfg)
    recipe = FullBatchRecipe.from_config(cfg, dm.info)
    network = recipe.make_network(recipe.hidden_dim).train()
    fit_module._note_dense_features.cache_clear()
    torch.manual_seed(0)
    with caplog.at_level("DEBUG", logger=fit_module.__name__):
        assert sparse_inputs(recipe, dm.graph, network) is dm.graph
        drawn = torch.rand(3)
        assert sparse_inputs(recipe, dm.graph, network) is dm.graph
    torch.manual_seed(0)
    assert torch.equal(drawn, torch.rand(3))  # the trial's draws were undone
    # once per reason, one sentence, at debug level only: normal output holds no dispatcher internals
    (note,) = [r for r in caplog.records if "does not take a sparse feature matrix" in r.getMessage()]
    assert note.levelname == "DEBUG" and "backends" not in note.getMessage() and len(note.getMessage()) < 250, note
    assert not [r for r in caplog.records if r.levelno >= logging.INFO]
    monkeypatch.setattr(fit_module, "SPARSE_FEATURE_DENSITY", 0.2)  # 2 of 6 non-zero is now too dense
    assert sparse_inputs(recipe, dm.graph, recipe.make_network(recipe.hidden_dim)) is dm.graph


def test_the_objective_is_grands_mean_loss_over_passes_plus_consistency() -> None:
    """Two passes over two nodes, node 0 labelled class 0: softmax rows (3/4, 1/4) and (1/4, 3/4) for
    node 0, (1/2, 1/2) twice for node 1. Supervised: (ln 4/3 + ln 4) / 2 = ln(16/3) / 2. The average
    (1/2, 1/2) stays so when sharpened; node 0 is 2 * (1/4)^2 = 1/8 off it in each pass, node 1 0, so
    the consistency term is weight 2 * (1/8 + 0) / 2 = 1/8."""
    recipe = FullBatchRecipe(
        make_network=lambda hidden: torch.nn.Identity(),
        hidden_dim=1,
        optimizer=torch.optim.SGD,
        loss=torch.nn.CrossEntropyLoss(),
        max_epochs=1,
        consistency=ConsistencyLoss(num_augmentations=2, temperature=0.5, weight=2.0),
    )
    ln3 = math.log(3.0)
    passes = [torch.tensor([[ln3, 0.0], [0.0, 0.0]]), torch.tensor([[0.0, ln3], [0.0, 0.0]])]
    loss = recipe.objective(passes, torch.tensor([0]), torch.tensor([0]))
    assert loss.item() == pytest.approx(math.log(16 / 3) / 2 + 1 / 8, abs=1e-6)
    with pytest.raises(ValueError, match="the objective takes 2 passes' logits, got 1"):
        recipe.objective(passes[:1], torch.tensor([0]), torch.tensor([0]))


def test_a_grand_fit_trains_on_its_augmented_passes(tmp_path: Path) -> None:
    cfg = planetoid_cfg(tmp_path, "experiment=planetoid/cora-grand", "trainer.max_epochs=3", "speedups=off")
    dm = node_datamodule(cfg)
    recipe = FullBatchRecipe.from_config(cfg, dm.info)
    assert recipe.consistency is not None and recipe.passes == 4  # GRAND's S on Cora
    calls: list[bool] = []

    def counted(hidden: int) -> torch.nn.Module:
        network = recipe.make_network(hidden)
        network.register_forward_hook(lambda module, args, out: calls.append(module.training))
        return network

    counting = dataclasses.replace(recipe, make_network=counted)
    single = fit(counting, dm.graph, seed=0, select=False)
    assert calls == [True] * 3 * 4 + [False]  # S passes in each of 3 epochs, then one evaluation
    (batched,) = fit_many(recipe, dm.graph, seed=0, labels=dm.graph.y.unsqueeze(0))
    assert (batched.train, batched.val, batched.test) == (single.train, single.val, single.test)


def test_appnp_fits_batched_on_the_plan_as_one_by_one(tmp_path: Path) -> None:
    # the IGB code's ValidUtil PPNP: no dropout anywhere, so the K products run on the plan (under vmap: batched)
    cfg = planetoid_cfg(
        tmp_path,
        "model=appnp",
        "model.hidden_dim=8",
        "model.input_dropout=0",
        "model.layer.dropout=0",
        "model.layer.edge_dropout=0",
    )
    graph = node_datamodule(cfg).graph
    recipe = FullBatchRecipe.from_config(cfg, node_datamodule(cfg).info)
    labels = graph.y.repeat(2, 1)
    labels[1, graph.train_mask] = 0
    batched = fit_many(recipe, graph, seed=1, labels=labels)
    one_by_one = [fit(recipe, graph, seed=1, select=False, labels=y) for y in labels]
    for b, s in zip(batched, one_by_one, strict=True):
        assert (b.train, b.val, b.test) == (s.train, s.val, s.test)
        assert torch.equal(b.predictions, s.predictions)
    assert torch.equal(batched[1].predictions, torch.zeros_like(graph.y))


def transcribed_run(
    network: torch.nn.Module, data: Data, labels: torch.Tensor, epochs: int, early_stopping: int
) -> tuple[int, float, int]:
    """THUDM/IGB@0731be2b8f72f02205fb884a83c27c6be88aea54, validutil/train_eval.py, ``run``'s loop for one run,
    transcribed (``data.y`` holding the pseudo-labels on the validation nodes, accuracies on the test nodes'
    true labels; Adam as planetoid_cfg sets it: lr 0.1, weight decay 5e-4). Returns (epoch of the minimum
    validation loss, its test accuracy, the last epoch trained)."""
    optimizer = torch.optim.Adam(network.parameters(), lr=0.1, weight_decay=5e-4)
    best_val_loss, best_epoch, test_acc = float("inf"), 0, 0.0
    val_loss_history: list[float] = []
    for epoch in range(1, epochs + 1):
        network.train()
        optimizer.zero_grad()
        out = F.log_softmax(network(data), dim=1)
        F.nll_loss(out[data.train_mask], labels[data.train_mask]).backward()
        optimizer.step()
        network.eval()
        with torch.no_grad():
            logits = F.log_softmax(network(data), dim=1)
        val_loss = F.nll_loss(logits[data.val_mask], labels[data.val_mask]).item()
        if val_loss < best_val_loss:
            best_val_loss, best_epoch = val_loss, epoch
            test_acc = float((logits[data.test_mask].max(1)[1] == data.y[data.test_mask]).float().mean())
        val_loss_history.append(val_loss)
        if early_stopping > 0 and epoch > epochs // 2:
            tmp = torch.tensor(val_loss_history[-(early_stopping + 1) : -1])
            if val_loss > tmp.mean().item():
                break
    return best_epoch, test_acc, epoch


def test_fit_runs_is_the_igb_codes_train_eval_run(tmp_path: Path) -> None:
    cfg = planetoid_cfg(tmp_path, "model.dropout=0.5", "trainer.max_epochs=40", "speedups=off")
    dm = node_datamodule(cfg)
    graph, recipe = dm.graph, FullBatchRecipe.from_config(cfg, dm.info)
    graph.train_mask = graph.train_mask | graph.val_mask
    labels = graph.y.clone()
    labels[graph.val_mask] = (graph.y[graph.val_mask] + 1) % 3  # pseudo-labels, all wrong
    runs = fit_runs(recipe, graph, seed=5, labels=labels, runs=2, patience=3)
    torch.manual_seed(5)
    for run in runs:
        best_epoch, test, last = transcribed_run(recipe.make_network(recipe.hidden_dim), graph, labels, 40, 3)
        assert (run.epochs, run.test) == (best_epoch, pytest.approx(test))
        assert best_epoch < last < 40  # the validation loss on wrong labels rises: the run stops after epoch 20
    assert runs[0].test != runs[1].test or runs[0].epochs != runs[1].epochs  # fresh weights for each run
    with pytest.raises(ConfigError, match=r"task\.final\.runs=0 must be a positive number of runs"):
        fit_runs(recipe, graph, seed=5, labels=labels, runs=0, patience=3)
