"""Data-parallel runs on CPU (``trainer=ddp_cpu``, gloo): rank 0 writes one ``results.json``, and its
test metric and predictions are exactly those of a single-process evaluation of the same checkpoint."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import lightning as L
import numpy as np
import pytest
import torch
from omegaconf import DictConfig

from graphbench.build.data import build_datamodule
from graphbench.build.model import network_builder
from graphbench.build.task_module import build_task_module
from graphbench.callbacks.predictions import TestPredictions
from tests.conftest import FAST_CYCLES
from tests.e2e.test_cli import run_cli
from tests.paths import SHARED_DATA

pytestmark = pytest.mark.slow


def single_process_test(cfg: DictConfig, checkpoint: Path) -> tuple[dict[str, float], dict[str, torch.Tensor]]:
    """The test metrics and predictions of ``checkpoint`` evaluated in this one process."""
    L.seed_everything(int(cfg.seed), verbose=False)
    datamodule = build_datamodule(cfg)
    datamodule.prepare_data()
    datamodule.setup("fit")
    network = network_builder(cfg, datamodule.info)(int(cfg.model.hidden_dim))
    module = build_task_module(cfg, network, datamodule.info)
    module.load_state_dict(torch.load(checkpoint, map_location="cpu", weights_only=False)["state_dict"])
    predictions = TestPredictions()
    trainer = L.Trainer(accelerator="cpu", devices=1, logger=False, callbacks=[predictions], enable_progress_bar=False)
    metrics = trainer.test(module, datamodule=datamodule, verbose=False)[0]
    return metrics, predictions.predictions


def test_two_process_ddp_on_cycles_equals_single_process_evaluation(
    tmp_path: Path, compose_cfg: Callable[..., DictConfig]
) -> None:
    # 33 test graphs: the two ranks' shares differ in size, where a padding sampler would repeat one
    overrides = [*FAST_CYCLES, "dataset.num_test=33", "dataset.batch_size=8"]
    run_dir = tmp_path / "run"
    result = run_cli(["trainer=ddp_cpu", "trainer.devices=2", *overrides, f"hydra.run.dir={run_dir}"], tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("status: completed") == 1  # one summary: rank 1 reports nothing
    record = json.loads((run_dir / "results.json").read_text())
    assert record["status"] == "completed"
    assert sorted(p.name for p in run_dir.rglob("results.json")) == ["results.json"]
    assert (run_dir / "ddp" / "rank1.log").is_file()

    cfg = compose_cfg(overrides, run_dir=tmp_path / "eval")
    metrics, expected = single_process_test(cfg, run_dir / "checkpoints" / "best.ckpt")
    assert record["metrics"]["test/accuracy"] == metrics["test/accuracy"]
    saved = np.load(run_dir / "predictions.npz")
    assert len(np.unique(saved["index"])) == 33  # every test graph once, none repeated
    np.testing.assert_array_equal(saved["index"], expected["index"].numpy())
    np.testing.assert_array_equal(saved["y_true"], expected["y_true"].numpy())
    np.testing.assert_allclose(saved["y_pred"], expected["y_pred"].numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("evaluation", ["full", "sampled"])
def test_two_process_ddp_on_cora_with_neighbor_sampling_equals_single_process_evaluation(
    evaluation: str, tmp_path: Path, compose_cfg: Callable[..., DictConfig]
) -> None:
    """Each rank trains on its part of the seed nodes and tests its share of Cora's 1,000 test nodes
    (full-graph or neighbor-sampled inference); the shares add up to the single-process evaluation."""
    if not (SHARED_DATA / "Planetoid").is_dir():
        pytest.skip(f"real data root with Planetoid/ not found at {SHARED_DATA} (set GRAPHBENCH_SHARED_DATA)")
    overrides = ["dataset=cora", "sampler=neighbor", f"paths.data_dir={SHARED_DATA}", "trainer.max_epochs=2"]
    if evaluation == "sampled":
        # a node's prediction depends on the other seeds of its batch (they change the subgraph's
        # degrees), so the batches must be the same on both sides: every neighbour (-1), and 500 seeds
        # per batch, which makes each rank's share of the 1,000 test nodes one of the single process's batches
        overrides += ["sampler.eval=sampled", "sampler.eval_num_neighbors=[-1,-1]", "sampler.eval_batch_size=500"]
    run_dir = tmp_path / "run"
    result = run_cli(["trainer=ddp_cpu", "trainer.devices=2", *overrides, f"hydra.run.dir={run_dir}"], tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads((run_dir / "results.json").read_text())
    assert record["status"] == "completed"

    cfg = compose_cfg(overrides, run_dir=tmp_path / "eval")
    metrics, expected = single_process_test(cfg, run_dir / "checkpoints" / "best.ckpt")
    assert record["metrics"]["test/accuracy"] == pytest.approx(metrics["test/accuracy"], abs=1e-6)
    saved = np.load(run_dir / "predictions.npz")
    assert len(np.unique(saved["index"])) == 1000  # every test node once, none repeated
    np.testing.assert_array_equal(saved["index"], expected["index"].numpy())
    np.testing.assert_array_equal(saved["y_true"], expected["y_true"].numpy())
    np.testing.assert_allclose(saved["y_pred"], expected["y_pred"].numpy(), rtol=1e-5, atol=1e-5)


def test_full_batch_node_level_refuses_two_devices(tmp_path: Path) -> None:
    result = run_cli(
        [
            "dataset=syn-homophily",
            "trainer=ddp_cpu",
            "trainer.devices=2",
            "trainer.max_epochs=1",
            f"hydra.run.dir={tmp_path / 'run'}",
        ],
        tmp_path,
    )
    assert result.returncode == 1
    assert "trains full-batch, which runs on one device: set trainer.devices=1, or pick a mini-batch sampler" in result.stderr
    assert not (tmp_path / "run" / "ddp").exists()  # refused before any worker started
