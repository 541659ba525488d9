"""map_chunks: order kept, work done in child processes with single-threaded BLAS, errors raised."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal

import pytest
import torch
import torch.multiprocessing
from threadpoolctl import threadpool_info

from graphbench.run.processes import map_chunks, usable_cores
from graphbench.run.signals import run_signals


def _where(chunk: list[int]) -> tuple[list[int], int, list[int]]:
    blas_threads = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    return [2 * c for c in chunk], os.getpid(), blas_threads


def _fail(chunk: list[int]) -> list[int]:
    if 3 in chunk:
        raise ValueError(f"bad chunk {chunk}")
    return chunk


def _signal_setup(_: int) -> tuple[list[object], set[int], int]:
    handlers = [signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGUSR2)]
    return handlers, signal.pthread_sigmask(signal.SIG_BLOCK, []), os.getpid()


def _pids_in_a_daemon(_: int) -> tuple[list[int], int]:
    return [pid for _, pid, _ in map_chunks(_where, [[1], [2]], workers=2)], os.getpid()


def test_order_children_and_single_threaded_blas() -> None:
    chunks = [[i, i + 1] for i in range(0, 20, 2)]
    out = map_chunks(_where, chunks, workers=2)
    assert [values for values, _, _ in out] == [[2 * c for c in chunk] for chunk in chunks]
    assert all(pid != os.getpid() for _, pid, _ in out)
    assert all(threads and set(threads) == {1} for _, _, threads in out)


def test_one_worker_runs_here_and_errors_reach_the_caller() -> None:
    out = map_chunks(_where, [[1], [2]], workers=1)
    assert [pid for _, pid, _ in out] == [os.getpid()] * 2
    assert map_chunks(_where, [], workers=2) == []
    with pytest.raises(ValueError, match=r"bad chunk \[3\]"):
        map_chunks(_fail, [[1], [2], [3]], workers=2)


def test_a_daemon_process_works_in_itself() -> None:
    with mp.get_context("fork").Pool(1) as pool:  # pool workers are daemons: no children allowed
        ((pids, worker),) = pool.map(_pids_in_a_daemon, [0])
    assert pids == [worker, worker]
    assert usable_cores() >= 1


def test_workers_leave_a_runs_signals_to_the_parent() -> None:
    # inherited, the run's SIGTERM handler raised in a worker as the pool stopped it, which could
    # leave the pool's queue lock held and the pool hanging; the workers now die on SIGTERM
    ignored = [signal.SIG_DFL, signal.SIG_IGN, signal.SIG_IGN, signal.SIG_IGN]
    with run_signals():
        parent = signal.getsignal(signal.SIGTERM)
        out = map_chunks(_signal_setup, [0, 1, 2, 3], workers=2)
        assert signal.getsignal(signal.SIGTERM) is parent and callable(parent)
        assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == set()  # the parent's mask is back
    assert all(pid != os.getpid() for _, _, pid in out)
    assert all(handlers == ignored and blocked == set() for handlers, blocked, _ in out)


def _strategy_and_tensor(chunk: int) -> tuple[str, torch.Tensor]:
    return torch.multiprocessing.get_sharing_strategy(), torch.full((3,), float(chunk))


def test_workers_send_tensors_through_files() -> None:
    previous = torch.multiprocessing.get_sharing_strategy()
    torch.multiprocessing.set_sharing_strategy("file_descriptor")
    try:
        results = map_chunks(_strategy_and_tensor, [1, 2], workers=2)
        assert torch.multiprocessing.get_sharing_strategy() == "file_system"
    finally:
        torch.multiprocessing.set_sharing_strategy(previous)
    assert [strategy for strategy, _ in results] == ["file_system", "file_system"]
    assert [tensor.tolist() for _, tensor in results] == [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
