"""Time per training epoch and peak memory, measured the same way for every run."""

from __future__ import annotations

import gc
import resource
import sys
import time

import lightning as L
import torch


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MiB. On Linux ``VmHWM`` from ``/proc/self/status``:
    ``ru_maxrss`` survives ``exec``, so a process started by a large parent (a sweep launcher, a job
    runner) would report the parent's size. Elsewhere ``ru_maxrss`` (KiB on Linux, bytes on macOS)."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def reset_peak_memory() -> None:
    """Start this run's peak-memory measurement afresh, so that each run of an in-process multirun
    reports its own peak rather than the highest of the process so far.

    First the reference cycles a finished run left behind (its Trainer, module, data and callbacks
    refer to each other) are collected: the cyclic collector may not have run since, and an earlier
    run's model and data would otherwise still be resident while this one loads its own. Then the
    high-water marks are reset: on Linux ``VmHWM`` (:func:`peak_rss_mb`) to the current resident size
    by writing ``5`` to ``/proc/self/clear_refs`` (Linux >= 4.0; where that fails, the peak stays the
    process's); on CUDA the peak allocation of every device (``torch.cuda.reset_peak_memory_stats``),
    when CUDA has been initialised. The peak of a run thus includes the resident size of the process
    when it started (the interpreter and its libraries), as a run alone in its process does.
    """
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        pass
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        for index in range(torch.cuda.device_count()):
            torch.cuda.reset_peak_memory_stats(index)


class ResourceTracker(L.Callback):
    """Records the wall time of each training epoch (first batch start to last batch end, so
    validation is excluded) and the peak memory: GPU memory allocated when training on CUDA,
    otherwise the process's peak RSS, each since the run's :func:`reset_peak_memory`."""

    def __init__(self) -> None:
        self.epoch_times_s: list[float] = []
        self._start = 0.0
        self._last_batch_end = 0.0

    def state_dict(self) -> dict[str, list[float]]:
        return {"epoch_times_s": self.epoch_times_s}

    def load_state_dict(self, state_dict: dict[str, list[float]]) -> None:
        self.epoch_times_s = list(state_dict["epoch_times_s"])

    def on_train_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._start = self._last_batch_end = time.perf_counter()

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *args: object) -> None:
        self._last_batch_end = time.perf_counter()

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.epoch_times_s.append(self._last_batch_end - self._start)

    @property
    def time_per_epoch_s(self) -> float | None:
        return sum(self.epoch_times_s) / len(self.epoch_times_s) if self.epoch_times_s else None

    @staticmethod
    def peak_memory_mb(device: torch.device) -> float:
        if device.type == "cuda":
            return torch.cuda.max_memory_allocated(device) / (1024 * 1024)
        return peak_rss_mb()
