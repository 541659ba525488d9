"""``peak_rss_mb`` is the peak of this process alone, not of the process that started it, and
``reset_peak_memory`` starts a new peak after freeing what an earlier run left in reference cycles."""

from __future__ import annotations

import subprocess
import sys
import weakref

import pytest

from graphbench.callbacks.resources import peak_rss_mb, reset_peak_memory


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM is Linux's")
def test_child_of_a_large_parent_reports_its_own_peak() -> None:
    ballast = b"\x01" * (1024 * 2**20)  # 1 GiB written, so resident in this (the parent) process
    assert peak_rss_mb() > 1024
    child = subprocess.run(
        [sys.executable, "-c", "from graphbench.callbacks.resources import peak_rss_mb; print(peak_rss_mb())"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    del ballast
    # ru_maxrss would report >= 1 GiB here: it survives fork + exec
    assert 10 < float(child.stdout) < 900


class Holder:
    """Something in a reference cycle, as a finished run's Trainer and module are."""

    def __init__(self, size: int) -> None:
        self.ballast = bytearray(b"\x01" * size)  # written, so resident
        self.me = self


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM and /proc/self/clear_refs are Linux's")
def test_reset_frees_an_earlier_runs_cycles_and_starts_a_new_peak() -> None:
    holder = Holder(256 * 2**20)
    alive = weakref.ref(holder)
    del holder  # garbage now, freed only by the cyclic collector
    assert alive() is not None
    high = peak_rss_mb()
    reset_peak_memory()
    assert alive() is None
    assert peak_rss_mb() < high - 200  # the 256 MiB are neither resident nor in the peak any more
