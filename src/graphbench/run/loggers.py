"""The run's loggers, composed from ``conf/logger/`` (several at once: ``logger=[csv,tensorboard,wandb]``),
and loggers that can never kill a training run."""

from __future__ import annotations

import csv
import functools
import hashlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lightning.pytorch.loggers import CSVLogger, TensorBoardLogger, WandbLogger
from lightning.pytorch.loggers.logger import DummyExperiment

from graphbench.run.record import RESULTS_FILENAME

log = logging.getLogger(__name__)

#: the W&B artifact type of a run's results (``logger.wandb.upload_results=true``)
RESULTS_ARTIFACT_TYPE: str = "results"


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
    ``wandb sync``. ``finish()`` ends the W&B run, so each Hydra job of a multirun gets its own run.

    Without an explicit ``id`` the run's id is derived from its directory (``save_dir``) and W&B is
    told to resume it if it exists, so a requeued or resumed job continues the same W&B run.

    ``log_model`` is Lightning's: ``true`` uploads the best-validation checkpoint (``best.ckpt``) as a
    W&B model artifact when training ends, ``all`` every time it is saved. ``upload_results=true`` uploads
    the run's ``results.json`` and ``predictions*.npz`` as an artifact of type ``results`` when the run
    ends (:meth:`upload_run_files`); offline, both stay in the run's files until ``wandb sync``."""

    def __init__(self, *, save_dir: str, id: str | None = None, upload_results: bool = False, **kwargs: Any) -> None:
        run_id = id or hashlib.sha1(str(Path(save_dir).resolve()).encode()).hexdigest()[:16]
        kwargs.setdefault("resume", "allow")
        super().__init__(save_dir=save_dir, id=run_id, **kwargs)
        # Lightning passes anonymous=None to wandb.init, a setting W&B 0.2x ignores and warns about on every run
        self._wandb_init.pop("anonymous", None)
        self.failed: Exception | None = None
        self.upload_results = upload_results

    def _disable(self, exc: Exception) -> None:
        self.failed = exc
        log.error(
            "W&B logging failed and is switched off for this run; training continues. Cause: %s: %s", type(exc).__name__, exc
        )

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
    def upload_run_files(self, run_dir: Path) -> None:
        """Log ``results.json`` and the ``predictions*.npz`` of ``run_dir`` as one artifact, named
        ``results-<run id>``, of type :data:`RESULTS_ARTIFACT_TYPE`."""
        import wandb

        experiment = self.experiment
        if isinstance(experiment, DummyExperiment):
            return
        artifact = wandb.Artifact(name=f"results-{self.version}", type=RESULTS_ARTIFACT_TYPE)
        for path in [Path(run_dir) / RESULTS_FILENAME, *sorted(Path(run_dir).glob("predictions*.npz"))]:
            if path.is_file():
                artifact.add_file(str(path))
        experiment.log_artifact(artifact)

    @_guarded
    def finish(self, exit_code: int = 0) -> None:
        """End the W&B run; a non-zero ``exit_code`` marks it failed in W&B."""
        if self._experiment is not None:
            self._experiment.finish(exit_code=exit_code)


class RunTensorBoardLogger(TensorBoardLogger):
    """Lightning's ``TensorBoardLogger`` writing one event file for the whole run.

    Lightning closes the writer when ``fit`` ends and tensorboardX reopens it for ``test``, naming the
    new file by the current second and host (``events.out.tfevents.<seconds>.<host>``) and opening it
    with ``"wb"``: a run whose ``fit`` ends in the second its writer started truncates the file that
    held every training and validation scalar. Here ``finalize`` (the end of ``fit``, then of ``test``)
    only flushes, and :meth:`finish` closes the writer once the run has ended."""

    def finalize(self, status: str) -> None:
        if self._experiment is not None:
            self.experiment.flush()
        if status == "success":
            self.save()  # the hyperparameters file, as Lightning's finalize writes it

    def finish(self) -> None:
        """Close the event file (the run's last call to this logger)."""
        if self._experiment is not None:
            self.experiment.close()


class ResumableCSVLogger(CSVLogger):
    """Lightning's ``CSVLogger`` whose ``metrics.csv`` survives a resumed run: Lightning deletes an
    existing file when its writer starts; this one keeps the rows of the epochs the resumed
    checkpoint holds (``epoch <= keep_through_epoch``, set by :meth:`resume_after`) and appends."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.keep_through_epoch: int | None = None

    def resume_after(self, epoch: int) -> None:
        """Keep the rows of epochs ``0..epoch``; the run continues with epoch ``epoch + 1``."""
        self.keep_through_epoch = epoch

    @property
    def experiment(self) -> Any:
        if self._experiment is not None:
            return self._experiment
        path = Path(self.log_dir) / "metrics.csv"
        kept: list[dict[str, str]] = []
        header: list[str] = []
        if self.keep_through_epoch is not None and path.is_file():
            with open(path, newline="") as handle:
                reader = csv.DictReader(handle)
                header = list(reader.fieldnames or [])
                kept = [
                    row for row in reader if row.get("epoch", "") != "" and int(float(row["epoch"])) <= self.keep_through_epoch
                ]
        experiment = super().experiment  # Lightning's writer removes the old file here
        if header:
            with open(path, "w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=header)
                writer.writeheader()
                writer.writerows(kept)
            experiment.metrics_keys = header
        return experiment
