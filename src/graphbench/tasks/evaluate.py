"""The ``eval`` task: score a checkpoint on any splits and write a normal run directory.

    python run.py task=eval ckpt_path=outputs/<date>/<time>/checkpoints/best.ckpt dataset=texas
    python run.py task=eval ckpt_path=... 'task.splits=[test]'

The network is the checkpoint's (:mod:`graphbench.run.checkpoints`: its model, head, pe, normalization and
budget, from the config it saved), the data is the command line's dataset (another fold, say, with the
same feature dimensions). Each split in ``task.splits`` is run through Lightning's test loop with the
network in evaluation mode; ``results.json`` gets ``{split}/{metric}`` and ``{split}/loss``,
``predictions.npz`` the test split's raw outputs (as a train run writes it) and
``predictions_{split}.npz`` those of the other splits. On the checkpoint a train run tested,
``test/*`` and ``val/*`` are the numbers that run recorded; ``train/*`` differ from a train run's,
which are means over its last training epoch (in training mode, while the weights moved).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import lightning as L
from omegaconf import DictConfig, OmegaConf
from torch.utils.data import DataLoader

from graphbench import speedups
from graphbench.build.data import build_datamodule
from graphbench.build.loggers import open_loggers
from graphbench.build.model import prepared_model
from graphbench.build.trainer import build_trainer
from graphbench.callbacks.predictions import TestPredictions
from graphbench.config.checks import check_config
from graphbench.data.datamodules import DataModule
from graphbench.run.checkpoints import checkpoint_config, network_from_checkpoint, read_checkpoint
from graphbench.run.distributed import processes_per_node
from graphbench.run.frame import RunFrame, completed_run, record_raw_files, run_frame
from graphbench.run.record import RunRecord
from graphbench.run.signals import Preempted
from graphbench.vocabulary.errors import ConfigError
from graphbench.vocabulary.splits import SPLITS

log = logging.getLogger(__name__)


def predictions_file(split: str) -> str:
    """``predictions.npz`` for the test split (the file a train run writes), ``predictions_{split}.npz`` otherwise."""
    return "predictions.npz" if split == "test" else f"predictions_{split}.npz"


def evaluate(cfg: DictConfig, *, splits: Sequence[str] = SPLITS, overrides: Sequence[str] = ()) -> RunRecord:
    """Score the network of ``cfg.ckpt_path`` on ``splits`` of ``cfg.dataset``; returns the run's record,
    also in ``<paths.output_dir>/results.json``, whose config holds the checkpoint's network groups.
    ``overrides`` are Hydra's task overrides: one that contradicts the checkpoint's network is refused.

    Every ending is recorded, as a train run's: a missing or unreadable ``ckpt_path``, a checkpoint
    without a config, unknown splits or several devices end the run at once with a one-line
    ``failed: ...`` status (the config recorded is then the command line's)."""
    checkpoint: dict[str, Any] = {}
    refusal: ConfigError | None = None  # recorded as the run's status, with the command line's config
    try:
        checkpoint, cfg = _prepared(cfg, list(splits), overrides)
    except ConfigError as exc:
        refusal = exc
    if (done := completed_run(cfg)) is not None:  # resume=auto skips a completed run
        return done
    with run_frame(cfg, overrides) as frame:
        if refusal is not None:
            raise refusal
        _score(cfg, frame, checkpoint, list(splits))
    return frame.record


def _prepared(cfg: DictConfig, splits: list[str], overrides: Sequence[str]) -> tuple[dict[str, Any], DictConfig]:
    """The checkpoint and ``cfg`` with the checkpoint's network;
    raises a one-line :class:`ConfigError` for a missing or unreadable ``ckpt_path``, a checkpoint
    without a config, unknown splits, a command line contradicting the network or several devices."""
    path = cfg.get("ckpt_path")
    if not path:
        raise ConfigError("task=eval needs a checkpoint: ckpt_path=<run dir>/checkpoints/best.ckpt")
    unknown = [s for s in splits if s not in SPLITS]
    if not splits or unknown or len(set(splits)) != len(splits):
        raise ConfigError(f"task.splits={splits} must list distinct splits out of {list(SPLITS)}")
    checkpoint = read_checkpoint(path)
    config = checkpoint_config(checkpoint)
    if config is None:
        raise ConfigError(
            f"ckpt_path={path} holds no run config (saved by an older graphbench): evaluate it with the graphbench "
            "version that trained it, or train it again"
        )
    cfg = network_from_checkpoint(cfg, config, overrides, str(path))
    trainer_cfg = OmegaConf.to_container(cfg.trainer, resolve=True)
    assert isinstance(trainer_cfg, dict)
    if processes_per_node(trainer_cfg) * int(trainer_cfg.get("num_nodes") or 1) > 1:
        raise ConfigError("task=eval runs on one device: set trainer.devices=1 (and trainer.num_nodes=1)")
    return checkpoint, cfg


class _SplitAsTest(L.LightningDataModule):
    """``datamodule`` with ``split``'s evaluation loader (in order, unshuffled) as the test loader; its
    batch transfer is the datamodule's (``dataset.batch_on_device`` batches are gathered on the device)."""

    def __init__(self, datamodule: DataModule, split: str) -> None:
        super().__init__()
        self.datamodule = datamodule
        self.split = split

    def test_dataloader(self) -> DataLoader:
        return self.datamodule.loader(self.split, shuffle=False)

    def transfer_batch_to_device(self, batch: Any, device: Any, dataloader_idx: int) -> Any:
        return self.datamodule.transfer_batch_to_device(batch, device, dataloader_idx)


def _check_split_scorable(datamodule: DataModule, split: str) -> None:
    """The training split of a link dataset (positives only, negatives drawn at random) and the training
    loader of a mini-batch sampler (random subgraphs) give no deterministic score: refused in one line."""
    if split != "train":
        return
    info = datamodule.info
    sampler = datamodule.sampler
    if info.level == "link" or not sampler.is_full_batch:
        raise ConfigError(
            f"task=eval scores the train split of full-batch node and graph datasets only (dataset "
            f"'{info.name}' is {info.level}-level, sampler {type(sampler).__name__}): "
            "set task.splits=[val,test]"
        )


def _score(cfg: DictConfig, frame: RunFrame, checkpoint: dict[str, Any], splits: list[str]) -> None:
    """Score ``checkpoint``'s network on each of ``splits``, filling ``frame.record`` and writing each
    split's predictions."""
    record = frame.record
    check_config(cfg)
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    datamodule = build_datamodule(cfg)
    datamodule.prepare_data()
    datamodule.setup("fit")
    record_raw_files(record, datamodule)
    info = datamodule.info
    for split in splits:
        _check_split_scorable(datamodule, split)
    module = prepared_model(cfg, datamodule, record, checkpoint)
    record.score = None if "test" in splits else f"{splits[0]}/{info.metric}"
    predictions = TestPredictions()
    open_loggers(cfg, record, frame.loggers)
    with speedups.run_scope(cfg.speedups.enabled):
        trainer = build_trainer(cfg, [predictions], frame.loggers, str(frame.output_dir), enable_checkpointing=False)
        for split in splits:
            module.test_split = split
            with frame.signals.lightning_loop():
                scores = trainer.test(module, datamodule=_SplitAsTest(datamodule, split), verbose=False)[0]
            if trainer.received_sigterm:
                raise Preempted("SIGTERM received during evaluation")
            if trainer.interrupted:
                raise KeyboardInterrupt
            record.metrics.update({k: float(v) for k, v in scores.items()})
            predictions.save(frame.output_dir / predictions_file(split))
