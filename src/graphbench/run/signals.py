"""Turning SIGTERM and Ctrl-C into a truthful run status, wherever in a run they arrive."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any

#: The signals :func:`run_signals` handles (forked workers reset them: ``graphbench.run.processes``).
RUN_SIGNALS: frozenset[signal.Signals] = frozenset({signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGUSR2})


class Preempted(BaseException):
    """SIGTERM arrived outside Lightning's loops (while data was prepared, say). A ``BaseException``,
    like ``KeyboardInterrupt``, so that no ``except Exception`` on the way swallows it."""


@dataclass
class SignalState:
    """Which signal arrived, and whether Lightning's loops are running. Inside ``trainer.fit``/``test``
    Lightning's own SIGTERM handler (which calls ours too) stops at the next batch boundary with a
    ``SIGTERMException``; outside them our handler raises :class:`Preempted` at once."""

    received: int | None = None
    in_lightning: bool = False
    #: inside :meth:`deferred`: the exception a signal raises waits in ``pending``
    deferring: bool = False
    pending: BaseException | None = None

    @contextmanager
    def lightning_loop(self) -> Iterator[None]:
        self.in_lightning = True
        try:
            yield
        finally:
            self.in_lightning = False

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """A block no signal interrupts (the write of the run's record): the exception a signal
        raises is kept in ``pending`` until :meth:`raise_pending`."""
        self.deferring = True
        try:
            yield
        finally:
            self.deferring = False

    def raise_pending(self) -> None:
        """Raise the exception of a signal that arrived inside :meth:`deferred`, if one did."""
        pending, self.pending = self.pending, None
        if pending is not None:
            raise pending

    def interrupt(self, exc: BaseException) -> None:
        """Raise ``exc`` now, or keep it for :meth:`raise_pending` inside :meth:`deferred`."""
        if self.deferring:
            self.pending = self.pending or exc
            return
        raise exc


@contextmanager
def run_signals() -> Iterator[SignalState]:
    """Handle SIGTERM, SIGUSR1/SIGUSR2 and SIGINT for one run, restoring the previous handlers afterwards.

    SIGINT records itself and raises ``KeyboardInterrupt`` as Python's default does (Lightning turns
    that into ``SystemExit(1)`` inside its loops, so the record tells the two apart). SIGUSR1/SIGUSR2,
    SLURM's and submitit's warnings before a time limit, stop the run at once as a preemption, after
    calling whatever handler was installed before (submitit's requeue): the resumable state is the
    ``last.ckpt`` of the last completed epoch, so nothing is lost by not finishing the step.
    """
    state = SignalState()

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        state.received = signum
        if not state.in_lightning:
            state.interrupt(Preempted(f"received signal {signum}"))

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        state.received = signum
        state.interrupt(KeyboardInterrupt())

    def on_sigusr(signum: int, frame: FrameType | None) -> None:
        state.received = signum
        chained = previous.get(signum)
        if callable(chained):
            chained(signum, frame)
        state.interrupt(Preempted(f"received signal {signum}"))

    previous: dict[int, Any] = {}
    try:
        previous[signal.SIGTERM] = signal.signal(signal.SIGTERM, on_sigterm)
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, on_sigint)
        for usr in (signal.SIGUSR1, signal.SIGUSR2):
            previous[usr] = signal.signal(usr, on_sigusr)
    except ValueError:  # not the main thread (e.g. some launchers): signals stay as they were
        previous.clear()
    try:
        yield state
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
