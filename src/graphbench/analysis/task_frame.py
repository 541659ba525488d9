"""The frame of an analysis task (``task=memorization``, ``task=mia``): the run directory, a truthful
``status`` in ``results.json`` on every exit path, and the loggers finished with that status — the
guarantees :func:`graphbench.train.train` gives, through the same helpers."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from graphbench.errors import ConfigError
from graphbench.naming import seed_dependent_keys
from graphbench.record import COMPLETED, RESULTS_FILENAME, RUNNING, RunRecord
from graphbench.signals import run_signals
from graphbench.train import RESUME_MODES, _completed_record, _finish_loggers, _status_of

log = logging.getLogger(__name__)

#: ``body(cfg, record, output_dir, loggers)``: does the task's work, fills ``record`` and appends the
#: loggers it opens to ``loggers``; any exception it raises becomes the run's status
TaskBody = Callable[[DictConfig, RunRecord, Path, list[Any]], None]


def recorded_run(cfg: DictConfig, body: TaskBody) -> RunRecord:
    """Run ``body`` in ``paths.output_dir``; ``results.json`` holds ``running`` while it works and its
    final status after (``completed``, ``failed: ...``, ``diverged at epoch N``, ``interrupted``,
    ``preempted``). With ``resume=auto`` a directory holding a completed run is skipped."""
    output_dir = Path(cfg.paths.output_dir)
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"cannot create the run directory {output_dir} ({exc.strerror}); choose another with hydra.run.dir=<dir>"
        ) from None
    results_path = output_dir / RESULTS_FILENAME
    resume = str(cfg.get("resume") or "never")
    if resume not in RESUME_MODES:
        raise ConfigError(f"resume={resume!r} is not one of {list(RESUME_MODES)}")
    previous = _completed_record(results_path) if resume == "auto" else None
    if previous is not None:
        log.info("skipped: %s already holds a completed run (resume=auto)", output_dir)
        return previous
    record = RunRecord(status=RUNNING, config={}, run_dir=str(output_dir))
    loggers: list[Any] = []
    start = time.perf_counter()
    with run_signals() as signals:
        try:
            record.config = OmegaConf.to_container(cfg, resolve=True)  # type: ignore[assignment]
            record.replicate_keys = seed_dependent_keys(cfg)
            record.write(results_path)
            body(cfg, record, output_dir, loggers)
            record.status = COMPLETED
        except BaseException as exc:
            record.status = _status_of(exc, signals, output_dir)
        finally:
            record.total_time_s = time.perf_counter() - start
            record.write(results_path)
            _finish_loggers(loggers, record)
    return record
