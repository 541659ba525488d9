"""CPU-bound work over chunks, spread over forked worker processes.

Used where the work holds the GIL (RDKit's Python API, SciPy's LAPACK wrappers), so threads
would run it one at a time: featurizing SMILES and the LapPE eigendecompositions.
"""

from __future__ import annotations

import multiprocessing as mp
import signal
from collections.abc import Callable, Sequence
from typing import TypeVar

import torch.multiprocessing
from threadpoolctl import threadpool_limits

from graphbench.run.signals import RUN_SIGNALS
from graphbench.run.threads import cpu_allowance

T = TypeVar("T")
R = TypeVar("R")


def usable_cores() -> int:
    """The cores this process may use: its CPU affinity capped by its cgroup's CPU quota
    (:func:`graphbench.run.threads.cpu_allowance`)."""
    return cpu_allowance().usable


def share_tensors_through_files() -> None:
    """Tensors sent between processes (DataLoader workers, :func:`map_chunks`' pool) travel as named
    files in shared memory (torch's ``file_system`` strategy), not as file descriptors (its default
    on Linux). Descriptor passing fails on a GPU machine where several runs share the
    machine and each worker holds one descriptor per tensor it has sent; ``file_system`` needs none.
    Forked workers inherit the strategy; every run sets it before its loaders start workers."""
    torch.multiprocessing.set_sharing_strategy("file_system")


def map_chunks(fn: Callable[[T], R], chunks: Sequence[T], workers: int) -> list[R]:
    """``[fn(c) for c in chunks]`` on ``workers`` forked processes (in this process when there is
    one worker, one chunk, no ``fork`` on the platform, or this process is a daemon, which may not
    have children), results in the order of ``chunks``.

    BLAS runs single-threaded meanwhile (children inherit the limit): each process is one core's
    worth of work, and a second BLAS thread per process would only oversubscribe the cores. ``fn``
    must be a module-level function (or a ``functools.partial`` of one) and must not use torch's
    thread pool, which does not survive ``fork``. Exceptions in a worker are raised here.

    The children put SIGTERM back to its default and ignore SIGINT, SIGUSR1 and SIGUSR2: a run's
    handlers (:func:`graphbench.run.signals.run_signals`) belong to the parent, which stops the pool
    with SIGTERM. Inherited, they turned that SIGTERM into an exception that could leave a worker
    holding the pool's queue lock and its sibling blocked on it, so the pool never closed. The
    signals stay blocked from the fork until a child has reset them (none is lost: a blocked
    signal waits).
    """
    share_tensors_through_files()
    with threadpool_limits(limits=1, user_api="blas"):
        if workers <= 1 or len(chunks) <= 1 or "fork" not in mp.get_all_start_methods() or mp.current_process().daemon:
            return [fn(c) for c in chunks]
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, RUN_SIGNALS)
        try:
            pool = mp.get_context("fork").Pool(min(workers, len(chunks)), initializer=_worker_signals)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        with pool:
            # one chunk per task: callers size their chunks, and Pool.map's default batches them in fours
            return pool.map(fn, chunks, chunksize=1)


def _worker_signals() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for signum in RUN_SIGNALS - {signal.SIGTERM}:
        signal.signal(signum, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, RUN_SIGNALS)
