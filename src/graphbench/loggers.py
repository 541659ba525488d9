"""Loggers that can never kill a training run."""
from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from lightning.pytorch.loggers import WandbLogger
from lightning.pytorch.loggers.logger import DummyExperiment

log = logging.getLogger(__name__)


def _guarded(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(self: SafeWandbLogger, *args: Any, **kwargs: Any) -> Any:
        if self.failed is not None:
            return None
        try:
            return method(self, *args, **kwargs)
        except Exception as exc:
            self._disable(exc)
            return None

    return wrapper


class SafeWandbLogger(WandbLogger):
    """Lightning's ``WandbLogger`` where any W&B failure (no network, no API key, a server error)
    is reported once as an error in the log, after which W&B is switched off for this run and training
    goes on. ``offline=True`` (or ``WANDB_MODE=offline``) writes the run files locally for a later
    ``wandb sync``. ``finish()`` ends the W&B run, so each Hydra job of a multirun gets its own run."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.failed: Exception | None = None

    def _disable(self, exc: Exception) -> None:
        self.failed = exc
        log.error("W&B logging failed and is switched off for this run; training continues. Cause: %s: %s", type(exc).__name__, exc)

    @property
    def experiment(self) -> Any:
        if self.failed is not None:
            return DummyExperiment()
        try:
            return super().experiment
        except Exception as exc:
            self._disable(exc)
            return DummyExperiment()

    log_metrics = _guarded(WandbLogger.log_metrics)
    log_hyperparams = _guarded(WandbLogger.log_hyperparams)
    after_save_checkpoint = _guarded(WandbLogger.after_save_checkpoint)
    finalize = _guarded(WandbLogger.finalize)

    @_guarded
    def log_summary(self, values: dict[str, Any]) -> None:
        """Write final numbers (best epoch, test metrics, parameter count) into the run summary."""
        experiment = self.experiment
        if not isinstance(experiment, DummyExperiment):
            experiment.summary.update(values)

    @_guarded
    def finish(self, exit_code: int = 0) -> None:
        """End the W&B run; a non-zero ``exit_code`` marks it failed in W&B."""
        if self._experiment is not None:
            self._experiment.finish(exit_code=exit_code)
