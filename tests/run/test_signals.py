"""``run_signals``: SIGTERM, SIGINT and SIGUSR1/2 become a recorded signal and the right exception; the previous
handlers come back afterwards."""

from __future__ import annotations

import signal
from types import FrameType

import pytest

from graphbench.run.signals import Preempted, run_signals


def test_sigterm_outside_lightning_preempts_at_once_and_the_handlers_come_back() -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGUSR2)}
    with pytest.raises(Preempted, match=f"received signal {int(signal.SIGTERM)}"):
        with run_signals() as state:
            signal.raise_signal(signal.SIGTERM)
    assert state.received == signal.SIGTERM
    assert {s: signal.getsignal(s) for s in before} == before


def test_sigterm_inside_lightnings_loop_is_only_recorded() -> None:
    with run_signals() as state:
        with state.lightning_loop():
            assert state.in_lightning
            signal.raise_signal(signal.SIGTERM)  # Lightning's own handler stops at the batch boundary
        assert not state.in_lightning
    assert state.received == signal.SIGTERM


def test_sigint_raises_keyboard_interrupt_and_is_recorded() -> None:
    with pytest.raises(KeyboardInterrupt):
        with run_signals() as state:
            with state.lightning_loop():
                signal.raise_signal(signal.SIGINT)
    assert state.received == signal.SIGINT


def test_sigusr1_calls_the_previous_handler_then_preempts() -> None:
    calls: list[int] = []

    def requeue(signum: int, frame: FrameType | None) -> None:
        calls.append(signum)

    previous = signal.signal(signal.SIGUSR1, requeue)
    try:
        with pytest.raises(Preempted):
            with run_signals() as state:
                with state.lightning_loop():  # a time-limit warning stops the run even inside the loops
                    signal.raise_signal(signal.SIGUSR1)
        assert calls == [signal.SIGUSR1] and state.received == signal.SIGUSR1
        assert signal.getsignal(signal.SIGUSR1) is requeue
    finally:
        signal.signal(signal.SIGUSR1, previous)


@pytest.mark.parametrize(("signum", "raised"), [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Preempted)])
def test_a_signal_inside_deferred_waits_for_raise_pending(signum: int, raised: type[BaseException]) -> None:
    done = []
    with pytest.raises(raised):
        with run_signals() as state:
            with state.deferred():
                signal.raise_signal(signum)
                done.append("the write went on")
            assert done and state.received == signum and isinstance(state.pending, raised)
            state.raise_pending()
    assert state.pending is None


def test_raise_pending_without_a_signal_does_nothing() -> None:
    with run_signals() as state:
        with state.deferred():
            pass
        state.raise_pending()
    assert state.received is None
