"""The sampler group end to end: the real CLI on Cora and on a small generated graph, the one-line
refusal for graph-level data, and the task module's handling of sampled batches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch import nn
from torch_geometric.data import Data

from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.modules.task_module import GraphTaskModule
from tests.e2e.test_cli import run_cli
from tests.paths import SHARED_DATA

FAST = ["trainer.max_epochs=2", "trainer.enable_progress_bar=false"]


def test_cora_with_neighbor_sampling(tmp_path: Path) -> None:
    if not (SHARED_DATA / "Planetoid").is_dir():
        pytest.skip(f"real data root with Planetoid/ not found at {SHARED_DATA} (set GRAPHBENCH_SHARED_DATA)")
    run_dir = tmp_path / "run"
    proc = run_cli(
        ["dataset=cora", "sampler=neighbor", f"paths.data_dir={SHARED_DATA}", *FAST, f"hydra.run.dir={run_dir}"], tmp_path
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    results = json.loads((run_dir / "results.json").read_text())
    assert results["status"] == "completed" and results["epochs_trained"] == 2
    assert results["config"]["sampler"]["name"] == "neighbor"


def test_generated_graph_with_graphsaint_and_sampled_evaluation(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = [
        "dataset=sbm-large",
        "dataset.num_nodes=600",
        "sampler=saint_rw",
        "sampler.budget=50",
        "sampler.presample_steps=20",
        "sampler.eval=sampled",
        "sampler.eval_num_neighbors=[5,5]",
        "model=gcn",
        "model.num_layers=2",
        "model.hidden_dim=8",
        *FAST,
        f"hydra.run.dir={run_dir}",
    ]
    proc = run_cli(args, tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    results = json.loads((run_dir / "results.json").read_text())
    assert results["status"] == "completed"
    assert 0.0 <= results["metrics"]["test/accuracy"] <= 1.0


def test_a_sampler_on_graph_level_data_is_one_clear_error(tmp_path: Path) -> None:
    proc = run_cli(["dataset=cycles", "sampler=neighbor", *FAST, f"hydra.run.dir={tmp_path / 'run'}"], tmp_path)
    assert proc.returncode != 0
    errors = [line for line in (proc.stdout + proc.stderr).splitlines() if "sampler=neighbor applies to" in line]
    assert len(errors) == 1 and "use sampler=full" in errors[0]


class ReadX(nn.Module):
    """A network whose outputs are the batch's features (the logits under test)."""

    def forward(self, batch: Data) -> torch.Tensor:
        return batch.x


def node_module() -> GraphTaskModule:
    info = DatasetInfo(
        name="t",
        level="node",
        task_type="multiclass",
        num_outputs=2,
        metric="accuracy",
        higher_is_better=True,
        node_features=FeatureSpec("dense", 1),
        edge_features=None,
    )
    return GraphTaskModule(ReadX(), info, optimizer=torch.optim.SGD, loss=nn.CrossEntropyLoss())


def test_graphsaint_loss_weights_each_training_node() -> None:
    module = node_module()
    logits = torch.tensor([[2.0, 0.0], [0.0, 1.0], [1.0, 1.0], [3.0, -1.0]])
    batch = Data(
        x=logits,
        y=torch.tensor([0, 0, 1, 1]),
        train_mask=torch.tensor([True, True, False, True]),
        loss_weight=torch.tensor([0.5, 2.0, 9.0, 1.0]),
        n_id=torch.arange(4),
    )
    per_node = nn.functional.cross_entropy(logits, batch.y, reduction="none")
    expected = 0.5 * per_node[0] + 2.0 * per_node[1] + 1.0 * per_node[3]
    assert module.training_step(batch, 0) == pytest.approx(float(expected))


def test_a_sampled_batch_without_training_nodes_skips_the_step() -> None:
    batch = Data(
        x=torch.zeros(2, 2), y=torch.zeros(2, dtype=torch.long), train_mask=torch.zeros(2, dtype=torch.bool), n_id=torch.arange(2)
    )
    assert node_module().training_step(batch, 0) is None
