"""The frame of every run, training or analysis task: the run directory (one run each: a directory
that records another run is refused, :mod:`graphbench.run.run_dir`), ``resume=auto``'s skip of a
completed run, a truthful ``status`` in ``results.json`` on every exit path (``running`` while it
works, then ``completed``, ``failed: ...``, ``diverged at epoch N``, ``pruned at epoch N``,
``interrupted`` or ``preempted``), the run's provenance (:mod:`graphbench.run.provenance`: code, packages, machine,
overrides, start and end; the run's work adds the raw files it read), and the loggers finished with
that status (W&B also gets the provenance as config). A task runs its work inside
``with run_frame(cfg) as frame:``, after :func:`completed_run` found nothing to skip."""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from lightning.pytorch.utilities.exceptions import SIGTERMException
from omegaconf import DictConfig, OmegaConf

from graphbench.run.distributed import is_rank_zero
from graphbench.run.files import remove_partial_files
from graphbench.run.loggers import RunTensorBoardLogger, SafeWandbLogger
from graphbench.run.naming import seed_dependent_keys
from graphbench.run.provenance import Provenance, utc_now
from graphbench.run.provenance import collect as collect_provenance
from graphbench.run.record import (
    COMPLETED,
    INTERRUPTED,
    PREEMPTED,
    RESULTS_FILENAME,
    RUNNING,
    RunRecord,
    diverged,
    exit_code,
    failed,
    flat_config,
    pruned,
)
from graphbench.run.run_dir import existing_run, recorded_status, usable_dir
from graphbench.run.run_dir import resume_mode as checked_resume
from graphbench.run.signals import Preempted, SignalState, run_signals
from graphbench.run.threads import apply as apply_threads
from graphbench.run.threads import start_threads, threads_setting
from graphbench.vocabulary.errors import ConfigError, Diverged, GraphbenchError, Pruned

log = logging.getLogger(__name__)

#: the file beside ``results.json`` that holds the traceback of an unexpected error
ERROR_LOG: str = "error.log"


@dataclass
class RunFrame:
    """What a run's work gets from its frame: the run directory, the ``record`` it fills (the frame
    writes it as ``results.json``), the signal state (for ``signals.lightning_loop()`` around
    Lightning's loops), whether to resume from the last checkpoint, whether this process is the
    ``writer`` (rank 0 of a DDP run, or the only process: it alone logs and writes files), and the list
    to which it appends the loggers it opens (the frame finishes them with the status)."""

    output_dir: Path
    record: RunRecord
    signals: SignalState
    resume: bool
    writer: bool = True
    loggers: list[Any] = field(default_factory=list)


def resume_mode(cfg: DictConfig) -> str:
    """``cfg.resume``, checked: ``never`` (also when unset) or ``auto``."""
    return checked_resume(cfg.get("resume"))


def resolved_config(cfg: DictConfig) -> dict[str, Any] | None:
    """``cfg`` resolved to plain containers; ``None`` when a value does not resolve (the run then
    fails on it inside its frame, with the run recorded)."""
    try:
        return OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]
    except Exception:
        return None


def completed_run(cfg: DictConfig) -> RunRecord | None:
    """The completed run in ``paths.output_dir`` that ``resume=auto`` skips (every rank of a DDP run
    skips it; rank 0 says so on the console), or ``None``: the run is to be made. On rank 0 a directory
    holding another run is refused here, before anything is written (:func:`run_frame`)."""
    output_dir = Path(cfg.paths.output_dir)
    resume = resume_mode(cfg) == "auto"
    if not is_rank_zero():  # rank 0 checks the directory
        return completed_record(output_dir / RESULTS_FILENAME) if resume else None
    usable_dir(output_dir, "hydra.run.dir")
    previous = existing_run(output_dir, resume, resolved_config(cfg))
    if previous is None or not previous.completed:
        return None
    # on the console only: the run's log file (run.log) stays as the run left it
    print(f"skipped: {output_dir} already holds a completed run (resume=auto)", flush=True)
    return previous


@contextmanager
def run_frame(cfg: DictConfig, overrides: Sequence[str] = ()) -> Iterator[RunFrame]:
    """The frame of a run in ``paths.output_dir``: the work inside ``with run_frame(cfg) as frame:``
    fills ``frame.record``, which is also in ``results.json`` there, with the status of however the
    work ended (the exception, if any, is recorded and not raised further).

    The directory must hold no other run: one whose ``results.json`` records a run is refused
    (:class:`ConfigError`, before anything is written) unless ``resume=auto`` and the recorded config
    equals this one (:func:`graphbench.run.run_dir.existing_run`); then the run continues (a completed
    one is skipped before its frame opens: :func:`completed_run`). A fresh run claims the directory
    atomically (of two runs started in one directory at once, one is refused). The process starts on
    the run's thread count (the config key ``threads``). A DDP rank other than 0 (``is_rank_zero``)
    gets a frame that writes nothing (:func:`worker_frame`). ``overrides`` are Hydra's task overrides
    of the run (``run.py`` passes them; none for a config composed in-process), recorded in its
    provenance."""
    output_dir = Path(cfg.paths.output_dir)
    usable_dir(output_dir, "hydra.run.dir")
    threads = start_threads(threads_setting(cfg.get("threads")))
    apply_threads(threads)
    resume = resume_mode(cfg) == "auto"
    if not is_rank_zero():  # rank 0 checks and claims the directory
        with worker_frame(output_dir, resume) as frame:
            yield frame
        return
    results_path = output_dir / RESULTS_FILENAME
    config = resolved_config(cfg)
    previous = existing_run(output_dir, resume, config)
    # the claim holds the config already, so that a run killed right after it continues under resume=auto
    record = RunRecord(status=RUNNING, config=config or {}, run_dir=str(output_dir))
    start = time.perf_counter()
    provenance: Provenance | None = None
    with run_signals() as signals:
        frame = RunFrame(output_dir, record, signals, resume)
        with signals.deferred():  # a signal during the claim takes effect once it is written, as the run's status
            if previous is None:
                claim(record, results_path, resume, output_dir)
        try:
            signals.raise_pending()
            if resume:  # a killed run may have left the temporary file of a write
                for folder in (output_dir, output_dir / "csv", output_dir / "checkpoints"):
                    for path in remove_partial_files(folder):
                        log.info("removed %s, the partial write of a killed run", path)
            provenance = record.provenance = collect_provenance(overrides)  # started now; the work adds its raw files
            provenance.threads = {"start": threads.to_dict()}
            log.info("threads: %s", threads.describe())
            record.config = OmegaConf.to_container(cfg, resolve=True)  # type: ignore[assignment]
            record.replicate_keys = seed_dependent_keys(cfg)
            with signals.deferred():
                record.write(results_path)
            signals.raise_pending()
            yield frame
            record.status = COMPLETED
        except BaseException as exc:
            record.status = status_of(exc, signals, output_dir)
        finally:
            record.total_time_s = time.perf_counter() - start
            if provenance is not None:
                provenance.ended_at = utc_now()
            with signals.deferred():  # the run has ended: a signal now changes nothing of its record
                record.write(results_path)
            signals.pending = None
            finish_loggers(frame.loggers, record)


@contextmanager
def worker_frame(output_dir: Path, resume: bool) -> Iterator[RunFrame]:
    """The frame of a DDP rank other than 0: the same work as rank 0 (which writes every file of the
    run), its status kept in ``frame.record`` only; an error's traceback goes to stderr, where its
    launcher collects it."""
    record = RunRecord(status=RUNNING, config={}, run_dir=str(output_dir))
    with run_signals() as signals:
        try:
            yield RunFrame(output_dir, record, signals, resume, writer=False)
            record.status = COMPLETED
        except BaseException as exc:
            traceback.print_exception(exc)
            record.status = status_of(exc, signals, None)


class ReadsRawFiles(Protocol):
    """What :func:`record_raw_files` needs of a DataModule (every graphbench DataModule has it)."""

    def raw_file_md5s(self) -> dict[str, str]: ...


def record_raw_files(record: RunRecord, datamodule: ReadsRawFiles) -> None:
    """Put the MD5s of the raw files that ``datamodule`` (set up) built its data from into ``record``'s provenance."""
    if record.provenance is not None:
        record.provenance.raw_files = datamodule.raw_file_md5s()


def claim(record: RunRecord, results_path: Path, resume: bool, output_dir: Path) -> None:
    """Write ``record`` as ``results_path`` unless a file is there: of two runs started in one directory
    at once, one is refused (:class:`ConfigError`); under ``resume``, an unreadable record is overwritten."""
    try:
        record.write(results_path, exclusive=True)
    except FileExistsError:
        if not (resume and recorded_status(results_path) == "unreadable"):
            raise ConfigError(
                f"{output_dir} was just claimed by another run; start this one in a new directory "
                "(leave hydra.run.dir / hydra.sweep.dir unset, or name an unused one)"
            ) from None
        record.write(results_path)


def completed_record(results_path: Path) -> RunRecord | None:
    """The record in ``results_path`` when it holds a completed run; ``None`` otherwise (also when
    the file is missing or unreadable)."""
    try:
        record = RunRecord.read(results_path)
    except (OSError, ValueError, TypeError):
        return None
    return record if record.completed else None


def status_of(exc: BaseException, signals: SignalState, output_dir: Path | None) -> str:
    """The status of a run that ended with ``exc``; unexpected errors leave their traceback in
    ``error.log`` beside ``results.json`` (in ``output_dir``, when given)."""
    if isinstance(exc, Diverged):
        return diverged(exc.epoch)
    if isinstance(exc, Pruned):
        return pruned(exc.epoch)
    if isinstance(exc, KeyboardInterrupt):
        return INTERRUPTED
    if isinstance(exc, (Preempted, SIGTERMException)):
        return PREEMPTED
    if isinstance(exc, SystemExit) and signals.received is not None:
        # Lightning turns Ctrl-C inside its loops into SystemExit(1) after a graceful shutdown
        return INTERRUPTED if signals.received == 2 else PREEMPTED
    if isinstance(exc, GraphbenchError):
        lines = str(exc).splitlines()
        if len(lines) > 1:  # a list (e.g. of missing raw files): in full once, one item a line, on the console and in the log
            log.error("%s", exc)
            return failed(f"{lines[0].rstrip(':')}: listed in full in the run's log")
        return failed(str(exc))
    if output_dir is None:
        return failed(f"{type(exc).__name__}: {exc}")
    (output_dir / ERROR_LOG).write_text("".join(traceback.format_exception(exc)))
    return failed(f"{type(exc).__name__}: {exc} (traceback in {output_dir / ERROR_LOG})")


def finish_loggers(loggers: list[Any], record: RunRecord) -> None:
    """Give the W&B loggers the run's provenance (as config, dotted keys ``provenance.code.commit``, ...)
    and its summary, and finish them with its exit code; close the TensorBoard event files."""
    for lg in loggers:
        if isinstance(lg, RunTensorBoardLogger):
            lg.finish()
        if isinstance(lg, SafeWandbLogger):
            summary = {k: v for k, v in record.to_dict().items() if k not in ("config", "provenance")}
            if record.provenance is not None:
                lg.log_hyperparams(flat_config({"provenance": record.provenance.to_dict()}))
            lg.log_summary({**summary.pop("metrics", {}), **summary})
            if lg.upload_results and record.run_dir is not None:  # logger.wandb.upload_results=true
                lg.upload_run_files(Path(record.run_dir))
            lg.finish(exit_code=exit_code(record.status))
