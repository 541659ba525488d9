"""The LightningModule: loss, metrics and optimisation for a dataset's task."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import lightning as L
import torch
from torch import Tensor, nn
from torch.optim import Optimizer
from torch_geometric.data import Batch
from torchmetrics import MaxMetric, MinMetric

from graphbench.data.info import DatasetInfo
from graphbench.data.store.padding import real_graphs
from graphbench.metrics.mean import WeightedMean
from graphbench.metrics.registry import make_metric
from graphbench.modules.losses import ConsistencyLoss
from graphbench.modules.schedulers import SchedulerSpec
from graphbench.vocabulary.errors import ArgumentError
from graphbench.vocabulary.splits import SPLITS


class GraphTaskModule(L.LightningModule):
    """Trains ``network`` on a graph- or node-level task described by ``info`` with ``loss`` (from the
    dataset's config, ``dataset.module.loss``), called as ``loss(outputs, targets)`` on the labelled
    examples of the batch (targets as class indices for multiclass tasks, else float in the outputs'
    shape).

    Logs ``{split}/loss`` (the batch-size-weighted mean over the epoch; NaN if any batch's loss was)
    and ``{split}/{metric}`` each epoch, ``val/{metric}_best`` and the epoch's learning rate ``lr``; nothing is logged per step, since
    each ``self.log`` costs ~0.1 ms of Lightning's bookkeeping (more without
    :mod:`graphbench.speedups.result_moves`), a percent of a small full-batch step.
    ``test_step`` returns the batch's raw outputs, targets and dataset indices (``y_pred``,
    ``y_true``, ``index``) for
    :class:`graphbench.callbacks.predictions.TestPredictions`; the epoch history is kept by
    :class:`graphbench.callbacks.history.EpochHistory`.

    With ``consistency`` (a :class:`~graphbench.modules.losses.ConsistencyLoss`, from ``model.consistency``:
    GRAND, Feng et al. 2020) a training step runs the network :math:`S` = ``consistency.num_augmentations``
    times on the batch (each pass draws its own random augmentation, e.g. GRAND's DropNode) and
    minimizes the mean over the passes of ``loss`` on the split's examples plus the consistency term;
    ``train/loss`` is that total and the training metric scores the first pass, as the authors' code does.
    Evaluation is one forward pass, as without it.

    ``config`` (the run's composed config, resolved) is saved with ``save_hyperparameters``, so every
    checkpoint says what it is (:mod:`graphbench.run.checkpoints`). The test loop scores :attr:`test_split`
    (``test``; ``task=eval`` points it at train and val as well), logging ``{test_split}/*``.
    """

    def __init__(
        self,
        network: nn.Module,
        info: DatasetInfo,
        optimizer: Callable[[Iterable[nn.Parameter]], Optimizer],
        scheduler: Callable[..., SchedulerSpec] | None = None,
        *,
        loss: Callable[[Tensor, Tensor], Tensor],
        consistency: ConsistencyLoss | None = None,
        config: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        # the run's composed config in the checkpoint (hyper_parameters["config"]), so that a checkpoint says
        # what it is and task=eval rebuilds its network (graphbench.run.checkpoints); the loggers get the
        # config from the run itself, flat (graphbench.tasks.train)
        self.save_hyperparameters("config", logger=False)
        if consistency is not None and info.task_type != "multiclass":
            raise ArgumentError(
                f"consistency (GRAND's consistency regularization) needs a multiclass task; dataset "
                f"'{info.name}' is {info.task_type}: pass consistency=None"
            )
        self.consistency = consistency
        self.network = network
        self.info = info
        self.loss_fn = loss
        self.optimizer_factory = optimizer
        self.scheduler_factory = scheduler
        # keys carry a suffix: "train" would clash with nn.Module.train
        self.metrics = nn.ModuleDict({f"{split}_metric": make_metric(info) for split in SPLITS})
        # each epoch's loss: the mean over its examples (batches weighted by size), NaN when a batch's is
        self.losses = nn.ModuleDict({f"{split}_loss": WeightedMean() for split in SPLITS})
        self.val_best = MaxMetric() if info.higher_is_better else MinMetric()
        self.val_best.persistent(True)  # in the checkpoint, so a resumed run keeps its best-so-far
        self.stop_below_lr: float | None = None
        #: the split Lightning's test loop scores: ``test``, or another one for ``task=eval`` (graphbench.tasks.evaluate)
        self.test_split: str = "test"

    def forward(self, batch: Batch) -> Tensor:
        """The network's outputs; of a padded batch's graphs, the real ones' only (:func:`real_graphs`)."""
        return real_graphs(self.network(batch), batch)

    def _step(self, batch: Batch, split: str) -> tuple[Tensor, dict[str, Tensor]]:
        """The batch's loss over the split's examples, and their (detached) outputs and targets
        (``y_pred``, ``y_true``); updates the split's metric and epoch loss."""
        loss, outputs, target = self._supervised(self(batch), batch, split)
        self.metrics[f"{split}_metric"].update(outputs, target)
        self.losses[f"{split}_loss"].update(loss.detach().float(), outputs.size(0))
        return loss, {"y_pred": outputs, "y_true": target}

    def _supervised(self, logits: Tensor, batch: Batch, split: str) -> tuple[Tensor, Tensor, Tensor]:
        """The loss of ``logits`` over the split's examples, their detached float32 outputs and targets."""
        target = batch.y
        mask = batch[f"{split}_mask"] if self.info.level == "node" else None
        if mask is not None:
            logits, target = logits[mask], target[mask]
        if self.info.task_type == "multiclass":
            target = target.long().view(-1)
        else:
            target = target.float().view(logits.shape)
        if mask is not None and "loss_weight" in batch:
            loss = self._weighted_loss(logits, target, batch.loss_weight[mask])
        else:
            loss = self.loss_fn(logits, target)
        # metrics, epoch losses and saved predictions in float32 whatever the precision the network
        # ran in (``trainer.precision=bf16-mixed`` or ``16-mixed``: NumPy has no bfloat16)
        return loss, logits.detach().float(), target

    def _consistency_step(self, batch: Batch, consistency: ConsistencyLoss) -> Tensor:
        """GRAND's training objective: the supervised loss averaged over ``consistency.num_augmentations``
        random forward passes plus the consistency term over all of the batch's outputs."""
        all_logits = [self(batch) for _ in range(consistency.num_augmentations)]
        supervised = [self._supervised(logits, batch, "train") for logits in all_logits]
        loss = torch.stack([part[0] for part in supervised]).mean() + consistency(all_logits)
        _, outputs, target = supervised[0]
        self.metrics["train_metric"].update(outputs, target)
        self.losses["train_loss"].update(loss.detach().float(), outputs.size(0))
        return loss

    def _weighted_loss(self, logits: Tensor, target: Tensor, weight: Tensor) -> Tensor:
        r""":math:`\sum_i w_i \, \ell(\hat y_i, y_i)`: the per-example losses of ``loss_fn`` (whatever its
        reduction: it is called on one example at a time, vectorized by ``torch.func.vmap``) weighted by
        the batch's ``loss_weight``, GraphSAINT's loss normalization (:mod:`graphbench.data.samplers.saint`)."""
        per_example = torch.func.vmap(lambda out, y: self.loss_fn(out.unsqueeze(0), y.unsqueeze(0)))(logits, target)
        return (weight * per_example).sum()

    def training_step(self, batch: Batch, batch_idx: int) -> Tensor | None:
        if self.info.level == "node" and "n_id" in batch and not bool(batch["train_mask"].any()):
            return None  # a sampled subgraph without a training node: nothing to learn, no optimizer step
        if self.consistency is not None:
            return self._consistency_step(batch, self.consistency)
        return self._step(batch, "train")[0]

    def validation_step(self, batch: Batch, batch_idx: int) -> None:
        self._step(batch, "val")

    def test_step(self, batch: Batch, batch_idx: int) -> dict[str, Tensor]:
        outputs = self._step(batch, self.test_split)[1]
        if self.info.level == "node":
            index = batch[f"{self.test_split}_mask"].nonzero().view(-1)
            outputs["index"] = batch.n_id[index] if "n_id" in batch else index
        else:
            logits = outputs["y_pred"]
            outputs["index"] = batch.idx if "idx" in batch else torch.arange(logits.size(0), device=logits.device)
        return outputs

    def _log_epoch_loss(self, split: str) -> None:
        loss = self.losses[f"{split}_loss"]
        self.log(f"{split}/loss", loss.compute())
        loss.reset()

    def _log_epoch_metric(self, split: str) -> Tensor:
        """Logs the epoch's ``{split}/loss`` and ``{split}/{metric}``; returns the metric (a tensor on
        the metric's device: no host sync here)."""
        self._log_epoch_loss(split)
        value = self.metrics[f"{split}_metric"].compute()
        self.metrics[f"{split}_metric"].reset()
        self.log(f"{split}/{self.info.metric}", value)
        return value

    def on_validation_epoch_end(self) -> None:
        value = self._log_epoch_metric("val")
        if self.trainer.sanity_checking:
            return
        self.val_best.update(value)
        self.log(f"val/{self.info.metric}_best", self.val_best.compute())

    def on_train_epoch_start(self) -> None:
        # the rate this epoch trains with: Lightning steps epoch-interval schedulers (cosine) after the last
        # batch, before on_train_epoch_end
        self._epoch_lr = float(self.trainer.optimizers[0].param_groups[0]["lr"])

    def on_train_epoch_end(self) -> None:
        self._log_epoch_metric("train")
        self.log("lr", self._epoch_lr)  # the epoch's learning rate, to the loggers (the history keeps it as well)
        lr = self.trainer.optimizers[0].param_groups[0]["lr"]
        if self.stop_below_lr is not None and lr < self.stop_below_lr:
            self.trainer.should_stop = True

    def on_test_epoch_end(self) -> None:
        self._log_epoch_metric(self.test_split)

    def configure_gradient_clipping(
        self, optimizer: Optimizer, gradient_clip_val: float | None = None, gradient_clip_algorithm: str | None = None
    ) -> None:
        """Lightning's clipping (``trainer.gradient_clip_val``), called by Lightning before every
        optimizer step. Without a value (or with 0) Lightning clips nothing either, but only after
        validating the algorithm's name against its enum, ~70 us a step: returned at once here."""
        if not gradient_clip_val:
            return
        self.clip_gradients(optimizer, gradient_clip_val=gradient_clip_val, gradient_clip_algorithm=gradient_clip_algorithm)

    def configure_optimizers(self) -> Any:
        optimizer = self.optimizer_factory(self.parameters())
        if self.scheduler_factory is None:
            return optimizer
        spec = self.scheduler_factory(optimizer, monitor=self.info.monitor, mode="max" if self.info.higher_is_better else "min")
        self.stop_below_lr = spec.stop_below_lr
        return {"optimizer": optimizer, "lr_scheduler": spec.lightning_config}
