"""``peak_rss_mb`` is the peak of this process alone, not of the process that started it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from graphbench.callbacks.resources import peak_rss_mb


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
