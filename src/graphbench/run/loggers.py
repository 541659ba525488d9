"""The run's loggers, composed from ``conf/logger/`` (several at once: ``logger=[csv,tensorboard,wandb]``),
and loggers that can never kill a training run."""

from __future__ import annotations

import csv
import functools
import hashlib
import logging
import os
from argparse import Namespace
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lightning.pytorch.core.saving import save_hparams_to_yaml
from lightning.pytorch.loggers import CSVLogger, TensorBoardLogger, WandbLogger
from lightning.pytorch.loggers.logger import DummyExperiment
from lightning.pytorch.utilities import rank_zero_only

from graphbench.run.files import replace_atomically
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
    """Lightning's ``CSVLogger`` whose files survive a kill at any moment and a resumed run.

    Every write of ``metrics.csv`` and ``hparams.yaml`` replaces the whole file atomically
    (:func:`graphbench.run.files.replace_atomically`; Lightning appends rows and rewrites the file in
    place when a new column appears, so a kill could leave a truncated file). A resumed run keeps the
    rows of the epochs its checkpoint holds (``epoch <= keep_through_epoch``, set by :meth:`resume_after`)
    and appends: Lightning's writer deletes an existing ``metrics.csv`` when it starts, so the file waits
    beside it as ``metrics.csv.resuming`` (:data:`RESUMING_SUFFIX`) until the kept rows are written
    back, and a run killed in between finds them there."""

    #: the name ``metrics.csv`` has while a resumed run's writer starts (``csv/metrics.csv.resuming``)
    RESUMING_SUFFIX: str = ".resuming"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.keep_through_epoch: int | None = None

    def resume_after(self, epoch: int) -> None:
        """Keep the rows of epochs ``0..epoch``; the run continues with epoch ``epoch + 1``."""
        self.keep_through_epoch = epoch

    @property
    def metrics_path(self) -> Path:
        return Path(self.log_dir) / "metrics.csv"

    @property
    def experiment(self) -> Any:
        if self._experiment is not None:
            return self._experiment
        path = self.metrics_path
        resuming = path.with_name(path.name + self.RESUMING_SUFFIX)
        header: list[str] = []
        kept: list[dict[str, str]] = []
        if self.keep_through_epoch is not None:
            if path.is_file():
                os.replace(path, resuming)
            if resuming.is_file():
                header, rows = read_csv(resuming)
                kept = [row for row in rows if row.get("epoch") and int(float(row["epoch"])) <= self.keep_through_epoch]
        experiment = super().experiment  # Lightning's writer removes an existing metrics.csv here
        if header:
            write_csv(path, header, kept)
            experiment.metrics_keys = header
        resuming.unlink(missing_ok=True)
        return experiment

    @rank_zero_only
    def log_hyperparams(self, params: dict[str, Any] | Namespace | None = None) -> None:
        """Lightning's, with ``hparams.yaml`` replaced atomically."""
        values = vars(params) if isinstance(params, Namespace) else dict(params or {})
        experiment = self.experiment
        experiment.hparams.update(values)
        replace_atomically(Path(self.log_dir) / "hparams.yaml", lambda tmp: save_hparams_to_yaml(tmp, experiment.hparams))

    @rank_zero_only
    def save(self) -> None:
        """Write the rows logged since the last save: ``metrics.csv`` rewritten whole, atomically, with
        Lightning's columns (the sorted union of every key logged)."""
        experiment = self.experiment
        if not experiment.metrics:
            return
        path = self.metrics_path
        header, rows = read_csv(path) if path.is_file() else ([], [])
        keys = sorted(set(header) | set(experiment.metrics_keys) | {k for row in experiment.metrics for k in row})
        write_csv(path, keys, [*rows, *experiment.metrics])
        experiment.metrics_keys = keys
        experiment.metrics = []


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The header and the rows of the CSV file ``path``."""
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def write_csv(path: Path, header: list[str], rows: list[dict[str, Any]]) -> None:
    """``path`` replaced atomically by ``header`` and ``rows`` (a missing value is an empty field)."""

    def write(tmp: Path) -> None:
        with open(tmp, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=header)
            writer.writeheader()
            writer.writerows(rows)

    replace_atomically(path, write)
