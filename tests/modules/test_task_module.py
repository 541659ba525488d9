"""GraphTaskModule's steps on hand-built batches: the loss over the split's examples, the metric
and epoch-loss updates, and the test outputs with their dataset indices."""

from __future__ import annotations

from pathlib import Path

import lightning as L
import pytest
import torch
from torch import Tensor, nn
from torch.utils.data import DataLoader
from torch_geometric.data import Batch, Data

from graphbench.callbacks.divergence import DivergenceGuard
from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.modules.task_module import GraphTaskModule
from graphbench.vocabulary.errors import Diverged


class Outputs(nn.Module):
    """Returns the batch's fixed ``out`` attribute: the steps' bookkeeping is what is tested."""

    def forward(self, batch: Batch) -> Tensor:
        return batch.out


def module(level: str, task_type: str, num_outputs: int) -> GraphTaskModule:
    metric = "accuracy" if task_type == "multiclass" else "mae"
    info = DatasetInfo("toy", level, task_type, num_outputs, metric, task_type == "multiclass", FeatureSpec("dense", 1), None)
    loss = nn.CrossEntropyLoss() if task_type == "multiclass" else nn.L1Loss()
    return GraphTaskModule(Outputs(), info, lambda params: torch.optim.SGD(params, lr=0.1), loss=loss)


def node_batch(**extra: Tensor) -> Batch:
    # node 1 is classified right (class 1), node 3 wrong (class 0 predicted, 2 true)
    out = torch.tensor([[2.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 1.0], [4.0, 0.0, 1.0]])
    graph = Data(
        out=out,
        y=torch.tensor([0, 1, 2, 2]),
        edge_index=torch.tensor([[0, 1], [1, 0]]),
        num_nodes=4,
        train_mask=torch.tensor([False, True, False, True]),
        val_mask=torch.tensor([True, False, False, False]),
        test_mask=torch.tensor([False, False, True, True]),
        **extra,
    )
    return Batch.from_data_list([graph])


def test_training_step_is_the_loss_over_training_nodes_and_updates_the_epoch_figures() -> None:
    task = module("node", "multiclass", 3)
    batch = node_batch()
    loss = task.training_step(batch, 0)
    assert loss is not None
    expected = nn.functional.cross_entropy(batch.out[[1, 3]], torch.tensor([1, 2]))
    assert torch.equal(loss, expected)
    assert float(task.metrics["train_metric"].compute()) == 0.5
    assert torch.equal(task.losses["train_loss"].compute(), expected)
    task.validation_step(batch, 0)
    assert float(task.metrics["val_metric"].compute()) == 1.0


def test_test_step_returns_the_test_nodes_outputs_targets_and_indices() -> None:
    task = module("node", "multiclass", 3)
    batch = node_batch()
    outputs = task.test_step(batch, 0)
    assert torch.equal(outputs["y_pred"], batch.out[[2, 3]])
    assert torch.equal(outputs["y_true"], torch.tensor([2, 2]))
    assert torch.equal(outputs["index"], torch.tensor([2, 3]))
    assert not outputs["y_pred"].requires_grad


def test_test_step_of_a_sampled_subgraph_maps_its_nodes_to_dataset_ids() -> None:
    task = module("node", "multiclass", 3)
    outputs = task.test_step(node_batch(n_id=torch.tensor([40, 41, 42, 43])), 0)
    assert torch.equal(outputs["index"], torch.tensor([42, 43]))


def test_a_sampled_subgraph_without_training_nodes_takes_no_step() -> None:
    task = module("node", "multiclass", 3)
    batch = node_batch(n_id=torch.arange(4))
    batch.train_mask = torch.zeros(4, dtype=torch.bool)
    assert task.training_step(batch, 0) is None


def test_loss_weights_scale_each_training_nodes_loss() -> None:
    task = module("node", "multiclass", 3)
    batch = node_batch(loss_weight=torch.tensor([9.0, 0.5, 9.0, 2.0]))
    loss = task.training_step(batch, 0)
    per_node = nn.functional.cross_entropy(batch.out[[1, 3]], torch.tensor([1, 2]), reduction="none")
    assert loss is not None
    assert torch.allclose(loss, 0.5 * per_node[0] + 2.0 * per_node[1])


def test_graph_level_steps_use_every_graph_and_its_dataset_index() -> None:
    task = module("graph", "regression", 2)
    graphs = [Data(x=torch.zeros(1, 1), y=torch.tensor([[1.0, 2.0]]), idx=torch.tensor([7 + i]), num_nodes=1) for i in range(2)]
    batch = Batch.from_data_list(graphs)
    batch.out = torch.tensor([[1.5, 2.0], [0.0, 2.0]])
    loss = task.training_step(batch, 0)
    assert loss is not None
    assert float(loss) == pytest.approx((0.5 + 0.0 + 1.0 + 0.0) / 4)
    outputs = task.test_step(batch, 0)
    assert torch.equal(outputs["index"], torch.tensor([7, 8]))
    assert torch.equal(outputs["y_true"], batch.y.float())
    del batch.idx
    assert torch.equal(task.test_step(batch, 0)["index"], torch.tensor([0, 1]))


def one_graph_batch(out: float) -> Batch:
    """A batch of one one-node graph with target 1 whose network output is ``out``."""
    batch = Batch.from_data_list([Data(x=torch.zeros(1, 1), y=torch.tensor([[1.0]]), num_nodes=1)])
    batch.out = torch.tensor([[out]])
    return batch


def loader_of(batches: list[Batch]) -> DataLoader:
    """A DataLoader that yields the given batches as they are."""
    return DataLoader(batches, batch_size=None, collate_fn=lambda b: b)


def test_a_batch_whose_loss_is_nan_makes_the_epoch_loss_nan() -> None:
    """The epoch's loss is the batch-size-weighted mean of every batch's, a NaN one included (it is
    what DivergenceGuard stops on), not the mean of the finite ones."""
    task = module("graph", "regression", 1)
    batches = [one_graph_batch(out) for out in (1.5, float("nan"), 4.0)]
    task.validation_step(batches[0], 0)
    task.validation_step(batches[2], 2)
    assert float(task.losses["val_loss"].compute()) == (0.5 + 3.0) / 2
    task.validation_step(batches[1], 1)
    assert torch.isnan(task.losses["val_loss"].compute())


class Scaled(nn.Module):
    """``w * out``: one parameter, whose gradient the loss fixes."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.ones(()))

    def forward(self, batch: Batch) -> Tensor:
        return self.w * batch.out


def test_one_validation_batch_whose_loss_is_nan_stops_the_run(tmp_path: Path) -> None:
    """Through Lightning: a finite validation loss on two batches and NaN on a third is a diverged run."""
    info = DatasetInfo("toy", "graph", "regression", 1, "mae", False, FeatureSpec("dense", 1), None)
    task = GraphTaskModule(Scaled(), info, lambda params: torch.optim.SGD(params, lr=0.0), loss=nn.L1Loss())
    trainer = L.Trainer(
        max_epochs=2,
        num_sanity_val_steps=0,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[DivergenceGuard()],
        default_root_dir=tmp_path,
    )
    with pytest.raises(Diverged, match="the validation loss is not finite at epoch 0"):
        trainer.fit(
            task,
            train_dataloaders=loader_of([one_graph_batch(2.0)]),
            val_dataloaders=loader_of([one_graph_batch(out) for out in (1.5, float("nan"), 4.0)]),
        )


@pytest.mark.parametrize(("clip", "algorithm"), [(None, None), (0.0, None), (0.01, "norm"), (0.01, "value"), (100.0, "norm")])
def test_one_sgd_step_moves_the_weight_by_the_gradient_clipped_as_configured(
    tmp_path: Path, clip: float | None, algorithm: str | None
) -> None:
    batch = node_batch()
    gradient = torch.autograd.functional.jacobian(
        lambda w: nn.functional.cross_entropy(w * batch.out[[1, 3]], torch.tensor([1, 2])), torch.ones(())
    )
    info = DatasetInfo("toy", "node", "multiclass", 3, "accuracy", True, FeatureSpec("dense", 1), None)
    task = GraphTaskModule(Scaled(), info, lambda params: torch.optim.SGD(params, lr=1.0), loss=nn.CrossEntropyLoss())
    trainer = L.Trainer(
        max_epochs=1,
        gradient_clip_val=clip,
        gradient_clip_algorithm=algorithm,
        limit_val_batches=0,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=tmp_path,
    )
    trainer.fit(task, train_dataloaders=loader_of([batch]))
    step = 1.0 - float(task.network.w)
    if not clip or clip >= abs(float(gradient)):
        assert step == pytest.approx(float(gradient), rel=1e-6)
    else:  # both algorithms cap a single scalar gradient at the clip value
        assert step == pytest.approx(clip * float(torch.sign(gradient)), rel=1e-5)
