"""The loggers of ``cfg.logger`` (``conf/logger/``), opened with the run's config."""

from __future__ import annotations

from lightning.pytorch.loggers.logger import Logger
from omegaconf import DictConfig

from graphbench.config.instantiate import build
from graphbench.run.loggers import ResumableCSVLogger
from graphbench.run.record import RunRecord, flat_config


def build_loggers(cfg: DictConfig) -> list[Logger]:
    """One logger per entry of ``cfg.logger`` (``{csv: {_target_: ...}, wandb: {...}}``); none for ``logger=none``."""
    return [build(c, f"logger.{k}") for k, c in (cfg.get("logger") or {}).items() if c]


def open_loggers(cfg: DictConfig, record: RunRecord, loggers: list[Logger], resumed_epoch: int | None = None) -> None:
    """The start of every run that logs: append the loggers of ``cfg.logger`` to ``loggers`` (the run
    frame's list, which it finishes with the run's status) and give each the run's config. A run resumed
    after epoch ``resumed_epoch`` keeps the CSV rows of epochs ``0..resumed_epoch``: that is set before
    the first write (``log_hyperparams``), which opens the CSV file."""
    loggers.extend(build_loggers(cfg))
    for lg in loggers:
        if resumed_epoch is not None and isinstance(lg, ResumableCSVLogger):
            lg.resume_after(resumed_epoch)
        lg.log_hyperparams(flat_config(record.config or {}))
