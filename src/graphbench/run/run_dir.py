"""Where a run writes: a usable directory that holds no other run.

A run directory holds one run. A run refuses to start in a directory whose ``results.json`` records
another run, unless it continues that very run: ``resume=auto`` with the same config, up to the
:data:`VOLATILE_KEYS` (where the run writes, how it was started). :class:`RunDirGuard`, a Hydra
callback (``conf/hydra/default.yaml``), checks every path a user gives before Hydra writes its own
files there (its ``.hydra/`` configs, the job's log), so an unusable path or a taken directory ends in
one line instead of Hydra's traceback; the run frame (:mod:`graphbench.run.frame`) checks again with
the full config and claims the directory atomically.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from graphbench.run.record import RESULTS_FILENAME, RunRecord, finite_or_none, flat_config
from graphbench.vocabulary.errors import ConfigError

#: config keys whose value may differ between a run and its resumption: where it writes, whether it
#: resumes, and the logger names derived from the command line (the keys they name are compared)
VOLATILE_KEYS: frozenset[str] = frozenset({"paths.output_dir", "resume", "run_group", "run_name"})
#: ``resume``: ``auto`` skips a completed run and continues an interrupted one from its last checkpoint
RESUME_MODES: tuple[str, ...] = ("never", "auto")


def default_resume(launcher_target: str) -> str:
    """``resume`` when the config leaves it unset: ``auto`` under the submitit launchers (a job array's
    task is requeued into its own directory and must continue there), ``never`` elsewhere."""
    return "auto" if "submitit" in launcher_target else "never"


def resume_mode(resume: Any) -> str:
    """``resume`` checked against :data:`RESUME_MODES` (unset means ``never``)."""
    mode = str(resume or "never")
    if mode not in RESUME_MODES:
        raise ConfigError(f"resume={mode!r} is not one of {list(RESUME_MODES)}")
    return mode


def usable_dir(path: Path, setting: str) -> None:
    """Create ``path`` (and its parents) and check that a file can be written in it; ``setting`` is
    the config key that chose it, named in the one-line error."""
    probe = path / f".graphbench-write-test.{os.getpid()}"
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe.touch()
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(
            f"{setting}={path} cannot be used: {reason} (it must be a directory graphbench can create and write); "
            f"set {setting}=<a writable directory>"
        ) from None


def comparable(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` flattened to dotted keys, without :data:`VOLATILE_KEYS`, as ``results.json`` holds
    it (through JSON: tuples become lists, non-finite floats ``None``)."""
    as_json = json.loads(json.dumps(finite_or_none(config), default=str))
    return {k: v for k, v in flat_config(as_json).items() if k not in VOLATILE_KEYS}


def config_differences(recorded: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """``key: recorded -> current`` for every non-volatile key whose value differs, sorted by key."""
    old, new = comparable(recorded), comparable(current)
    return [
        f"{k}: {old.get(k, '<unset>')} -> {new.get(k, '<unset>')}"
        for k in sorted(old.keys() | new.keys())
        if old.get(k) != new.get(k)
    ]


def recorded_status(results_path: Path) -> str:
    try:
        return RunRecord.read(results_path).status
    except (OSError, ValueError, TypeError):
        return "unreadable"


def existing_run(output_dir: Path, resume: bool, config: dict[str, Any] | None) -> RunRecord | None:
    """The run recorded in ``output_dir`` that this run continues, or ``None`` when the directory
    records none. Raises :class:`ConfigError` when it records another run: always without ``resume``;
    with ``resume`` when its config differs from ``config`` (given: ``None`` skips the comparison). An
    unreadable record under ``resume`` is not compared (the run continues from its last checkpoint), nor
    is one without a config (a directory claimed by a run killed before it recorded its config: the
    run starts there)."""
    results_path = output_dir / RESULTS_FILENAME
    if not results_path.exists():
        return None
    if not resume:
        raise ConfigError(
            f"{output_dir} already holds another run ({RESULTS_FILENAME}: {recorded_status(results_path)}); "
            "start this one in a new directory (leave hydra.run.dir / hydra.sweep.dir unset, or name an unused one), "
            "or continue that run with resume=auto and its config"
        )
    try:
        record = RunRecord.read(results_path)
    except (OSError, ValueError, TypeError):
        return None
    if config is not None and record.config:  # an empty config: the claim of a run killed before it wrote anything else
        differences = config_differences(record.config, config)
        if differences:
            shown = "; ".join(differences[:3]) + (f"; and {len(differences) - 3} more" if len(differences) > 3 else "")
            raise ConfigError(
                f"{output_dir} holds a run with another config ({shown}); resume=auto continues only the same config: "
                "start this one in a new directory (leave hydra.run.dir / hydra.sweep.dir unset, or name an unused one)"
            )
    return record


def check_user_paths(config: DictConfig) -> None:
    """The data and cache paths of ``config`` are usable: ``paths.cache_dir`` a writable directory,
    ``paths.data_dir`` not a file (which raw files it must hold, each dataset checks itself)."""
    paths = config.get("paths") or {}
    if paths.get("cache_dir") is not None:
        usable_dir(Path(str(paths.cache_dir)), "paths.cache_dir")
    data_dir = Path(str(paths.data_dir)) if paths.get("data_dir") is not None else None
    if data_dir is not None and data_dir.exists() and not data_dir.is_dir():
        raise ConfigError(f"paths.data_dir={data_dir} is a file: set paths.data_dir=<the folder holding the raw datasets>")


class RunDirGuard(Callback):
    """Checks the run (or sweep) directory, ``paths.cache_dir`` and ``paths.data_dir`` before Hydra
    creates or writes anything, and refuses a directory that records another run (unless
    ``resume=auto``: the run frame then compares configs). A problem ends the process with one line
    on stderr and exit code 1."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        self._guard(config, Path(str(config.hydra.run.dir)), "hydra.run.dir", sweep=False)

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        self._guard(config, Path(str(config.hydra.sweep.dir)), "hydra.sweep.dir", sweep=True)

    @staticmethod
    def _guard(config: DictConfig, directory: Path, setting: str, sweep: bool) -> None:
        try:
            resume = resume_mode(config.get("resume") or default_resume(str(config.hydra.launcher.get("_target_", ""))))
            check_user_paths(config)
            usable_dir(directory, setting)
            if resume == "auto":
                return
            if sweep:
                taken = sorted(directory.glob(f"**/{RESULTS_FILENAME}"))
                if taken:
                    raise ConfigError(
                        f"{setting}={directory} already holds {len(taken)} run(s) (e.g. {taken[0].parent}); start this "
                        f"sweep in a new directory (leave {setting} unset, or name an unused one), or rerun it with "
                        "resume=auto to skip its completed jobs"
                    )
            else:
                existing_run(directory, resume=False, config=None)
        except ConfigError as exc:
            print(f"error: {exc}", file=sys.stderr, flush=True)
            raise SystemExit(1) from None
