"""ResourceTracker times each training epoch from its first batch's start to its last batch's end and reads
the peak memory; ``peak_rss_mb`` is the peak of this process alone, not of the process that started it, and
``reset_peak_memory`` starts a new peak after freeing what an earlier run left in reference cycles."""

from __future__ import annotations

import inspect
import subprocess
import sys
import weakref
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
import torch

from graphbench.callbacks import resources
from graphbench.callbacks.resources import ResourceTracker, peak_rss_mb, reset_peak_memory


def clock(monkeypatch: pytest.MonkeyPatch, readings: list[float]) -> None:
    """The tracker's ``time.perf_counter`` reads ``readings``, one per call, and nothing more."""
    ticks: Iterator[float] = iter(readings)
    monkeypatch.setattr(resources, "time", SimpleNamespace(perf_counter=lambda: next(ticks)))


def train_epoch(tracker: ResourceTracker, batches: int) -> None:
    """A training epoch of ``batches`` batches through the tracker's Lightning hooks."""
    tracker.on_train_epoch_start(None, None)  # type: ignore[arg-type]
    for _ in range(batches):
        tracker.on_train_batch_end(None, None, None, None, 0)  # type: ignore[arg-type]
    tracker.on_train_epoch_end(None, None)  # type: ignore[arg-type]


def test_an_epoch_lasts_from_its_start_to_its_last_batch_end_and_the_mean_is_over_epochs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tracker = ResourceTracker()
    assert tracker.time_per_epoch_s is None
    # epoch 0 starts at 10 s, its batches end at 11 and 12.5 s; epoch 1 starts at 30 s, its batch ends at 31 s
    clock(monkeypatch, [10.0, 11.0, 12.5, 30.0, 31.0])
    train_epoch(tracker, batches=2)
    train_epoch(tracker, batches=1)
    assert tracker.epoch_times_s == [2.5, 1.0]
    assert tracker.time_per_epoch_s == 1.75


def test_a_resumed_tracker_continues_the_epoch_times_of_its_checkpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    saved = ResourceTracker()
    saved.epoch_times_s = [2.0, 4.0]
    resumed = ResourceTracker()
    resumed.load_state_dict(saved.state_dict())
    clock(monkeypatch, [0.0, 3.0])
    train_epoch(resumed, batches=1)
    assert resumed.epoch_times_s == [2.0, 4.0, 3.0] and resumed.time_per_epoch_s == 3.0
    assert saved.epoch_times_s == [2.0, 4.0]  # the checkpoint's list is not the resumed tracker's


def test_the_peak_on_cuda_is_the_allocated_peak_and_elsewhere_the_process_peak(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[torch.device] = []

    def max_memory_allocated(device: torch.device) -> int:
        seen.append(device)
        return 3 * 2**20 + 2**19

    monkeypatch.setattr(torch.cuda, "max_memory_allocated", max_memory_allocated)
    assert ResourceTracker.peak_memory_mb(torch.device("cuda", 1)) == 3.5
    assert seen == [torch.device("cuda", 1)]
    before = peak_rss_mb()
    assert before <= ResourceTracker.peak_memory_mb(torch.device("cpu")) <= peak_rss_mb()  # a peak only grows


@pytest.mark.parametrize(("platform", "expected"), [("linux", 2.0), ("darwin", 2.0 / 1024)])
def test_without_proc_the_peak_is_ru_maxrss_in_the_platforms_unit(
    platform: str, expected: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_proc(*args: object) -> None:
        raise OSError("no /proc here")

    monkeypatch.setattr(resources, "open", no_proc, raising=False)  # found before the builtin
    monkeypatch.setattr(resources, "sys", SimpleNamespace(platform=platform))
    usage = SimpleNamespace(ru_maxrss=2048)  # KiB on Linux, bytes on macOS
    monkeypatch.setattr(resources, "resource", SimpleNamespace(RUSAGE_SELF=0, getrusage=lambda who: usage))
    assert peak_rss_mb() == expected


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM is Linux's")
def test_child_of_a_large_parent_reports_its_own_peak() -> None:
    ballast = b"\x01" * (512 * 2**20)  # 512 MiB written, so resident in this (the parent) process
    assert peak_rss_mb() > 512
    # the function's own source in a bare interpreter: importing its module (torch, Lightning) takes seconds
    program = f"import resource, sys\n{inspect.getsource(peak_rss_mb)}\nprint(peak_rss_mb())"
    child = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=120)
    del ballast
    # ru_maxrss would report >= 512 MiB here: it survives fork + exec; a bare interpreter's peak is some MiB
    assert 1 < float(child.stdout) < 400


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
