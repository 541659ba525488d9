"""task=igb in process on a tiny Cora fixture (official raw format), and the full-batch fit it shares with
task=validutil (``tests/tasks/test_validutil.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig

from graphbench.analysis.igb import fit as fit_module
from graphbench.analysis.igb.fit import FitResult, FullBatchRecipe, fit, grid_points, grid_search, igb_fit
from graphbench.analysis.subset_training import node_datamodule
from graphbench.run.cli import format_summary
from graphbench.tasks.igb import igb
from graphbench.vocabulary.errors import ConfigError
from tests.data.sources.node.planetoid_fixture import write_planetoid
from tests.paths import REPO


def cora_cfg(tmp_path: Path, *extra: str, experiment: str = "planetoid/cora-gcn") -> DictConfig:
    write_planetoid(tmp_path / "data", "cora")
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        return compose(
            "config",
            overrides=[
                f"experiment={experiment}",
                "trainer.max_epochs=4",
                "optimizer.lr=0.1",
                f"paths.data_dir={tmp_path / 'data'}",
                f"paths.cache_dir={tmp_path / 'cache'}",
                f"paths.output_dir={tmp_path / 'out'}",
                *extra,
            ],
        )


def test_fit_is_deterministic_and_retraining_runs_the_selected_epochs(tmp_path: Path) -> None:
    cfg = cora_cfg(tmp_path, "dataset.split=igb")
    dm = node_datamodule(cfg)
    recipe = FullBatchRecipe.from_config(cfg, dm.info)
    first = fit(recipe, dm.graph, seed=1, select=True)
    again = fit(recipe, dm.graph, seed=1, select=True)
    assert (first.epochs, first.val, first.test) == (again.epochs, again.val, again.test)
    assert 1 <= first.epochs <= 4
    selection, final = igb_fit(recipe, dm.graph, seed=1)
    assert final.epochs == selection.epochs == first.epochs
    assert fit(recipe, dm.graph, seed=1, select=False, epochs=3).epochs == 3


def test_a_scheduler_is_refused_with_the_fix(tmp_path: Path) -> None:
    cfg = cora_cfg(tmp_path, "scheduler=plateau")
    with pytest.raises(ConfigError, match="scheduler=none"):
        FullBatchRecipe.from_config(cfg, node_datamodule(cfg).info)


def test_igb_task_records_selection_and_retrained_test(tmp_path: Path) -> None:
    record = igb(cora_cfg(tmp_path, "dataset.split=igb"))
    assert record.status == "completed"
    assert record.epochs_trained == record.best_epoch + 1 and 0 <= record.best_epoch <= 3  # epochs from 0, as training's
    assert set(record.metrics) == {
        "train/accuracy",
        "val/accuracy",
        "test/accuracy",
        "selection/test_accuracy",
        "grid/num_points",
        "grid/best_mean_val_accuracy",
    }
    assert (tmp_path / "out" / "results.json").is_file()


def test_grid_points_enumerate_the_product_in_order_and_refuse_scalars() -> None:
    grid = {"model": {"hidden_dim": [16, 64]}, "optimizer": {"lr": [0.01, 0.05]}}
    assert grid_points(grid) == [
        {"model.hidden_dim": 16, "optimizer.lr": 0.01},
        {"model.hidden_dim": 16, "optimizer.lr": 0.05},
        {"model.hidden_dim": 64, "optimizer.lr": 0.01},
        {"model.hidden_dim": 64, "optimizer.lr": 0.05},
    ]
    assert grid_points(None) == [{}]
    with pytest.raises(ConfigError, match=r"task.grid.optimizer.lr=0.01: every grid entry is a non-empty list"):
        grid_points({"optimizer": {"lr": 0.01}})


def fake_fit(scores: dict[tuple[float, int], tuple[float, int]], calls: list[tuple[float, bool, int]]):
    """A fit whose validation accuracy and selected epoch are looked up by (learning rate, graph size):
    the search's answer is known. Records (lr, select, epochs) of every call."""

    def fake(recipe: FullBatchRecipe, graph, seed: int, *, select: bool, epochs: int | None = None, labels=None) -> FitResult:
        lr = recipe.optimizer([fit_module.torch.nn.Parameter(fit_module.torch.zeros(1))]).param_groups[0]["lr"]
        calls.append((lr, select, -1 if epochs is None else epochs))
        val, best_epoch = scores[(lr, int(graph.num_nodes))]
        return FitResult(best_epoch if select else int(epochs), 1.0, val, lr, fit_module.torch.zeros(0))

    return fake


def test_grid_search_picks_the_best_mean_validation_and_the_retrain_uses_it(tmp_path: Path, monkeypatch) -> None:
    cfg = cora_cfg(tmp_path, "dataset.split=igb")
    dm = node_datamodule(cfg)
    n = int(dm.graph.num_nodes)
    # lr 0.05 has the best validation accuracy (0.9), selected at epoch 3; 0.01 and 0.1 are worse
    scores = {(0.01, n): (0.5, 1), (0.05, n): (0.9, 3), (0.1, n): (0.7, 2)}
    calls: list[tuple[float, bool, int]] = []
    monkeypatch.setattr(fit_module, "fit", fake_fit(scores, calls))
    record = igb(cfg, grid={"optimizer": {"lr": [0.01, 0.05, 0.1]}})
    assert record.status == "completed"
    assert record.metrics["grid/optimizer.lr"] == 0.05 and record.metrics["grid/num_points"] == 3
    assert record.metrics["val/accuracy"] == 0.9 and (record.best_epoch, record.epochs_trained) == (2, 3)
    assert "best epoch: 2 of 3\n" in format_summary(record)  # the third of three epochs, numbered from 0 as training's
    # the retrain: the chosen lr, no selection, exactly the chosen epochs; its test accuracy is reported
    assert calls[-1] == (0.05, False, 3) and record.metrics["test/accuracy"] == 0.05


def test_grid_search_averages_over_graphs_and_keeps_the_first_on_a_tie(tmp_path: Path, monkeypatch) -> None:
    cfg = cora_cfg(tmp_path, "dataset.split=igb")
    dm = node_datamodule(cfg)
    small = dm.graph.subgraph(fit_module.torch.arange(5))
    n, m = int(dm.graph.num_nodes), 5
    # per graph lr 0.1 wins on the big graph, but 0.01 has the better mean; 0.02 ties 0.01 and comes later
    scores = {
        (0.01, n): (0.6, 1),
        (0.01, m): (1.0, 2),
        (0.1, n): (0.9, 4),
        (0.1, m): (0.5, 1),
        (0.02, n): (0.6, 1),
        (0.02, m): (1.0, 1),
    }
    monkeypatch.setattr(fit_module, "fit", fake_fit(scores, []))
    points = grid_points({"optimizer": {"lr": [0.01, 0.1, 0.02]}})
    recipes = [FullBatchRecipe.from_config(fit_module.with_overrides(cfg, p), dm.info) for p in points]
    choice = grid_search(points, recipes, [dm.graph, small], seed=0)
    assert choice.point == {"optimizer.lr": 0.01} and choice.mean_val == pytest.approx([0.8, 0.7, 0.8])
    assert [s.epochs for s in choice.selections] == [1, 2]
