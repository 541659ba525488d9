"""One graphbench run (``python run.py <overrides>``) whose file writes are instrumented, optionally
killed by itself at one of them: the unit of the kill campaign (scripts/kill_campaign.py).

    python scripts/killed_run.py [--events FILE] [--kill EVENT --signal SIGKILL] -- <run.py arguments>

Every write the run makes is an event ``<file>#<n>:<moment>``: the ``n``-th write of ``<file>`` (1-based),
at the ``moment`` ``before`` it starts, at its ``rename`` (the whole new file sits beside the target,
about to replace it) or ``after`` it. The files are the run record (``results.json``; write 1 claims the
directory, 2 records the config, 3 the end), the processed-data ``cache``, ``last.ckpt`` and
``best.ckpt``, ``metrics.csv`` and ``hparams.yaml`` (the CSV logger) and ``predictions.npz``. The writes
are found by wrapping the functions that make them (:data:`WRITERS`) and ``os.replace``/``os.rename``,
never by timing. ``--events`` appends each event as a line to FILE as it happens; ``--kill EVENT`` sends
``--signal`` to this process at that event (SIGKILL ends it there; SIGTERM and SIGINT go through the
run's handlers, as a scheduler's or a user's would).
"""

from __future__ import annotations

import argparse
import functools
import os
import runpy
import signal
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
MOMENTS: tuple[str, ...] = ("before", "rename", "after")
SIGNALS: dict[str, signal.Signals] = {"SIGKILL": signal.SIGKILL, "SIGTERM": signal.SIGTERM, "SIGINT": signal.SIGINT}


def file_kind(path: Any) -> str | None:
    """The name under which a write of ``path`` is counted, or ``None`` for a file the run does not own
    (a ``.tmp`` name is counted as the file it becomes)."""
    name = Path(str(path)).name
    if name.endswith(".pt"):
        return "cache"
    for kind in ("results.json", "last.ckpt", "best.ckpt", "metrics.csv", "hparams.yaml", "predictions.npz"):
        if name == kind or (name.startswith(f".{kind}.") and name.endswith(".tmp")):
            return kind
    if name.startswith("best") and name.endswith(".ckpt"):
        return "best.ckpt"
    return None


class Instrument:
    """Counts the writes of each file, appends each event to ``events`` and signals this process at ``kill``."""

    def __init__(self, events: Path | None, kill: str | None, signum: signal.Signals) -> None:
        self.events = events
        self.kill = kill
        self.signum = signum
        self.writes: Counter[str] = Counter()

    def event(self, kind: str, moment: str) -> None:
        name = f"{kind}#{max(self.writes[kind], 1)}:{moment}"
        if self.events is not None:
            with open(self.events, "a") as handle:
                handle.write(name + "\n")
        if name == self.kill:
            self.kill = None  # once: SIGTERM and SIGINT let the run go on to its end
            os.kill(os.getpid(), self.signum)

    def writer(self, function: Callable[..., Any], path_of: Callable[..., Any]) -> Callable[..., Any]:
        """``function`` with an event before and after each call; ``path_of(*args, **kwargs)`` is the file it writes."""

        @functools.wraps(function)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            kind = file_kind(path_of(*args, **kwargs))
            if kind is None:
                return function(*args, **kwargs)
            self.writes[kind] += 1
            self.event(kind, "before")
            result = function(*args, **kwargs)
            self.event(kind, "after")
            return result

        return wrapped

    def renamer(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """``os.replace``/``os.rename`` with the ``rename`` event of the file it moves into place."""

        @functools.wraps(function)
        def wrapped(source: Any, target: Any, *args: Any, **kwargs: Any) -> Any:
            kind = file_kind(target)
            if kind is not None and file_kind(source) in (kind, None):
                self.event(kind, "rename")
            return function(source, target, *args, **kwargs)

        return wrapped


def install(instrument: Instrument) -> None:
    """Wrap every function that writes a file of the run (:func:`file_kind`), and the renames."""
    from lightning.pytorch.plugins.io import TorchCheckpointIO

    from graphbench.callbacks.predictions import TestPredictions
    from graphbench.data.store import cache
    from graphbench.run import loggers
    from graphbench.run.record import RunRecord

    def first_path(*args: Any, **kwargs: Any) -> Any:
        return args[0]

    def second_path(*args: Any, **kwargs: Any) -> Any:
        return args[1]

    def third_path(*args: Any, **kwargs: Any) -> Any:
        return args[2] if len(args) > 2 else kwargs["path"]

    RunRecord.write = instrument.writer(RunRecord.write, second_path)  # type: ignore[method-assign]
    cache.atomic_write = instrument.writer(cache.atomic_write, first_path)
    TorchCheckpointIO.save_checkpoint = instrument.writer(TorchCheckpointIO.save_checkpoint, third_path)  # type: ignore[method-assign]
    if hasattr(loggers, "write_csv"):  # the CSV logger that writes whole files (absent in older checkouts)
        loggers.write_csv = instrument.writer(loggers.write_csv, first_path)
        loggers.ResumableCSVLogger.log_hyperparams = instrument.writer(  # type: ignore[method-assign]
            loggers.ResumableCSVLogger.log_hyperparams, lambda *a, **k: "hparams.yaml"
        )
    TestPredictions.save = instrument.writer(TestPredictions.save, second_path)  # type: ignore[method-assign]
    os.replace = instrument.renamer(os.replace)
    os.rename = instrument.renamer(os.rename)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python scripts/killed_run.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=Path, default=None, help="append each write event to this file")
    parser.add_argument("--kill", default=None, help="the event to signal this process at, e.g. results.json#1:after")
    parser.add_argument("--signal", default="SIGKILL", choices=sorted(SIGNALS), help="the signal sent at --kill")
    parser.add_argument("run_args", nargs=argparse.REMAINDER, help="-- then the arguments of run.py")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    run_args = args.run_args[1:] if args.run_args[:1] == ["--"] else args.run_args
    install(Instrument(args.events, args.kill, SIGNALS[args.signal]))
    sys.argv = [str(REPO / "run.py"), *run_args]
    runpy.run_path(str(REPO / "run.py"), run_name="__main__")


if __name__ == "__main__":
    main()
