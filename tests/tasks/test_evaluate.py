"""``task=eval`` (graphbench.tasks.evaluate) and ``ckpt_path`` in ``task=train``, on a tiny cycles run."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import lightning as L
import numpy as np
import pytest
import torch
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import DictConfig, open_dict

from graphbench.report.collect import collect
from graphbench.run.record import RunRecord
from graphbench.tasks.evaluate import evaluate
from graphbench.tasks.train import train
from graphbench.vocabulary.errors import ConfigError
from tests.conftest import FAST_CYCLES
from tests.paths import CONF


def _compose(overrides: Sequence[str], run_dir: Path, cache_dir: Path) -> DictConfig:
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=[f"paths.cache_dir={cache_dir}", *FAST_CYCLES, "logger=none", *overrides])
    GlobalHydra.instance().clear()
    with open_dict(cfg):
        cfg.paths.output_dir = str(run_dir)
    return cfg


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunRecord, Path]:
    """A 2-epoch GCN run on cycles (with a plateau scheduler, the default) and its directory."""
    root = tmp_path_factory.mktemp("trained")
    record = train(_compose(["model=gcn", "seed=1"], root / "run", root / "cache"))
    assert record.status == "completed"
    return record, root / "run"


def _weights(path: Path) -> dict[str, torch.Tensor]:
    state = torch.load(path, map_location="cpu", weights_only=False)["state_dict"]
    return {k: v for k, v in state.items() if k.startswith("network.")}


def test_eval_of_the_best_checkpoint_reproduces_the_recorded_test_and_val_metrics(trained, tmp_path: Path) -> None:
    record, run_dir = trained
    ckpt = run_dir / "checkpoints" / "best.ckpt"
    # the command line's model is the default (gine): the network is rebuilt from the checkpoint alone
    cfg = _compose(["task=eval", f"ckpt_path={ckpt}"], tmp_path / "eval", run_dir.parent / "cache")
    assert cfg.model.name == "gine"
    scored = evaluate(cfg, splits=cfg.task.splits)
    assert scored.status == "completed"
    for key in ("test/accuracy", "test/loss", "val/accuracy", "val/loss"):
        assert scored.metrics[key] == record.metrics[key], key
    assert {"train/accuracy", "train/loss"} <= set(scored.metrics)
    assert scored.num_params == record.num_params and scored.hidden_dim == record.hidden_dim == 16
    written = json.loads((tmp_path / "eval" / "results.json").read_text())
    assert written["status"] == "completed"
    assert written["config"]["model"]["name"] == "gcn"  # the truth: the checkpoint's network
    assert written["config"]["ckpt_path"] == str(ckpt)
    assert written["metrics"]["test/accuracy"] == record.metrics["test/accuracy"]
    trained_predictions, eval_predictions = np.load(run_dir / "predictions.npz"), np.load(tmp_path / "eval" / "predictions.npz")
    for key in ("y_pred", "y_true", "index"):
        np.testing.assert_array_equal(eval_predictions[key], trained_predictions[key])
    train_predictions = np.load(tmp_path / "eval" / "predictions_train.npz")
    assert train_predictions["index"].tolist() == list(range(96))  # the 96 training graphs, in order
    assert np.load(tmp_path / "eval" / "predictions_val.npz")["index"].tolist() == list(range(96, 128))


def test_eval_scores_only_the_splits_asked_for(trained, tmp_path: Path) -> None:
    _, run_dir = trained
    cfg = _compose(
        ["task=eval", f"ckpt_path={run_dir / 'checkpoints' / 'best.ckpt'}"], tmp_path / "eval", run_dir.parent / "cache"
    )
    scored = evaluate(cfg, splits=["val"])
    assert sorted(scored.metrics) == ["val/accuracy", "val/loss"]
    assert sorted(p.name for p in (tmp_path / "eval").glob("predictions*.npz")) == ["predictions_val.npz"]
    collection = collect([tmp_path / "eval"])
    assert not collection.failed and [b.test_key for b in collection.blocks] == ["val/accuracy"]


def test_eval_refuses_a_contradicting_command_line_and_bad_inputs_and_records_why(trained, tmp_path: Path) -> None:
    _, run_dir = trained
    ckpt = run_dir / "checkpoints" / "best.ckpt"
    cache = run_dir.parent / "cache"
    cases = [
        (
            ["model=gine"],
            {},
            r"holds another network than the command line asks for: model.name='gine' \(the checkpoint's: 'gcn'\)",
        ),
        ([], {"splits": ["tset"]}, r"task.splits=\['tset'\] must list distinct splits out of \['train', 'val', 'test'\]"),
        (None, {}, r"task=eval needs a checkpoint: ckpt_path="),
        ([f"ckpt_path={tmp_path / 'none.ckpt'}"], {}, r"is not a file"),
    ]
    for index, (extra, kwargs, message) in enumerate(cases):
        out = tmp_path / f"eval{index}"
        args = ["task=eval"] if extra is None else ["task=eval", f"ckpt_path={ckpt}", *extra]
        record = evaluate(_compose(args, out, cache), overrides=args, **kwargs)
        assert record.status.startswith("failed: ") and re.search(message, record.status), record.status
        assert "\n" not in record.status and not (out / "error.log").exists()  # one line, no traceback
        written = json.loads((out / "results.json").read_text())
        assert written["status"] == record.status and written["config"]["task"]["name"] == "eval"


class StartWeights(L.Callback):
    """Saves the network's weights as training starts (before the first optimizer step) to ``path``."""

    def __init__(self, path: str) -> None:
        self.path = path

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        torch.save({f"network.{k}": v.clone() for k, v in pl_module.network.state_dict().items()}, self.path)


def _with_start_weights(cfg: DictConfig, path: Path) -> DictConfig:
    with open_dict(cfg):
        cfg.callbacks.start_weights = {"_target_": f"{__name__}.StartWeights", "path": str(path)}
    return cfg


def test_train_from_a_checkpoint_starts_from_its_weights(trained, tmp_path: Path) -> None:
    """At step 0 the network holds the checkpoint's weights exactly (a fresh run does not); the training
    state is not resumed: the run trains its own epochs 0 and 1 with a fresh optimizer."""
    _, run_dir = trained
    ckpt = run_dir / "checkpoints" / "best.ckpt"
    cache = run_dir.parent / "cache"
    started = train(
        _with_start_weights(_compose(["model=gcn", "seed=2", f"ckpt_path={ckpt}"], tmp_path / "a", cache), tmp_path / "a.pt")
    )
    fresh = train(_with_start_weights(_compose(["model=gcn", "seed=2"], tmp_path / "b", cache), tmp_path / "b.pt"))
    assert started.status == fresh.status == "completed"
    weights = _weights(ckpt)
    at_start, fresh_start = torch.load(tmp_path / "a.pt"), torch.load(tmp_path / "b.pt")
    assert at_start.keys() == weights.keys() == fresh_start.keys()
    assert all(torch.equal(at_start[k], weights[k]) for k in weights)
    assert not all(torch.equal(fresh_start[k], weights[k]) for k in weights)
    assert started.epochs_trained == 2 and [epoch["epoch"] for epoch in started.history] == [0, 1]
    assert started.history[0]["lr"] == 0.001  # the configured rate: the optimizer and its schedule start afresh


def test_train_from_a_missing_checkpoint_fails_before_claiming_its_directory(tmp_path: Path) -> None:
    cfg = _compose([f"ckpt_path={tmp_path / 'missing.ckpt'}"], tmp_path / "run", tmp_path / "cache")
    with pytest.raises(ConfigError, match=r"missing.ckpt is not a file: give the checkpoint of a run"):
        train(cfg)
    assert not (tmp_path / "run" / "results.json").exists()


def test_train_from_a_checkpoint_of_another_network_fails_in_one_line(trained, tmp_path: Path) -> None:
    _, run_dir = trained
    cfg = _compose(
        ["model=gcn", "model.hidden_dim=8", f"ckpt_path={run_dir / 'checkpoints' / 'best.ckpt'}"],
        tmp_path / "run",
        run_dir.parent / "cache",
    )
    record = train(cfg)
    assert record.status.startswith("failed: ckpt_path=")
    assert "does not fit the network built here" in record.status and "\n" not in record.status
