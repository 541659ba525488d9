from __future__ import annotations

import logging
import multiprocessing as mp
import os
import re
import socket
import stat
import time
from pathlib import Path

import pytest
import torch

from graphbench.data.store.cache import (
    STALE_TMP_AGE_S,
    atomic_torch_save,
    build_announcement,
    cache_key,
    cache_lock,
    load_or_build,
    remove_stale_tmp_files,
    require_writable_dir,
)
from graphbench.vocabulary.errors import ConfigError


def test_builds_once_then_loads(tmp_path: Path) -> None:
    calls = []
    path = tmp_path / "c.pt"
    assert load_or_build(path, lambda: calls.append(1) or {"a": torch.ones(2)})["a"].tolist() == [1.0, 1.0]
    assert load_or_build(path, lambda: calls.append(1) or {"a": torch.zeros(2)})["a"].tolist() == [1.0, 1.0]
    assert calls == [1]


def test_failed_build_leaves_no_file(tmp_path: Path) -> None:
    path = tmp_path / "c.pt"

    def broken() -> dict:
        raise ValueError("boom")

    with pytest.raises(ValueError):
        load_or_build(path, broken)
    assert not path.exists()
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]


def _build_in_process(path: str, marker_dir: str, index: int) -> None:
    def build() -> torch.Tensor:
        (Path(marker_dir) / f"built-{index}").touch()
        return torch.arange(1000)

    assert load_or_build(Path(path), build).sum().item() == sum(range(1000))


def test_concurrent_jobs_build_once(tmp_path: Path) -> None:
    """The jobs of a job array share one cache: exactly one of them builds it."""
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_build_in_process, args=(str(tmp_path / "c.pt"), str(tmp_path), i)) for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    assert all(p.exitcode == 0 for p in procs)
    assert len(list(tmp_path.glob("built-*"))) == 1


def test_cache_key_depends_on_every_part() -> None:
    assert cache_key("a", 1) == cache_key("a", 1)
    assert cache_key("a", 1) != cache_key("a", 2)


def test_unreadable_entry_is_named_moved_aside_and_rebuilt(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A truncated cache file costs one warning: its bytes are kept aside and the entry is rebuilt."""
    path = tmp_path / "c.pt"
    torch.save({"a": torch.arange(1000)}, path)
    truncated = path.read_bytes()[:200]
    path.write_bytes(truncated)
    with caplog.at_level(logging.INFO, logger="graphbench.data.store.cache"):
        assert load_or_build(path, lambda: {"a": torch.arange(3)})["a"].tolist() == [0, 1, 2]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    (moved,) = tmp_path.glob("c.pt.corrupt-*")
    assert warnings[0].startswith(f"cache file {path} cannot be read (")
    assert warnings[0].endswith(f"; moved it to {moved.name} and rebuilding it")
    assert moved.read_bytes() == truncated
    assert torch.load(path, weights_only=False)["a"].tolist() == [0, 1, 2]
    # the rebuilt entry is read from then on, without another warning or build
    caplog.clear()
    assert load_or_build(path, lambda: pytest.fail("rebuilt a readable cache"))["a"].tolist() == [0, 1, 2]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_empty_entry_is_moved_aside_and_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "c.pt"
    path.write_bytes(b"")
    assert load_or_build(path, lambda: 7) == 7
    assert [p.read_bytes() for p in tmp_path.glob("c.pt.corrupt-*")] == [b""]


def test_build_logs_start_with_label_and_end_with_time(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "toy-0123.pt"
    with caplog.at_level(logging.INFO, logger="graphbench.data.store.cache"):
        load_or_build(path, lambda: 1, "toy: 1,234 graphs")
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0] == f"processing toy: 1,234 graphs: building the processed cache {path} ..."
    assert re.fullmatch(r"processed toy: 1,234 graphs in \d+\.\d s", messages[1])
    assert len(messages) == 2


def _dead_pid() -> int:
    proc = mp.get_context("fork").Process(target=lambda: None)
    proc.start()
    proc.join()
    return proc.pid


def test_stale_tmp_files_are_removed_and_live_ones_kept(tmp_path: Path) -> None:
    """A killed writer's temporary file goes (dead pid on this host, or unmodified for 6 h); a live
    writer's file, or any file this module does not write, stays."""
    host = socket.gethostname().replace(".", "_").replace("-", "_")
    dead = tmp_path / f".a-1.pt.{host}-{_dead_pid()}.0123abcd.tmp"
    live = tmp_path / f".a-1.pt.{host}-{os.getpid()}.0123abcd.tmp"
    other_host_fresh = tmp_path / ".a-1.pt.elsewhere-1.0123abcd.tmp"
    other_host_old = tmp_path / ".a-1.pt.elsewhere-2.0123abcd.tmp"
    mkstemp_old = tmp_path / ".a-1.pt.k2j3_x9a.tmp"  # the names tempfile.mkstemp gave before
    not_ours_old = tmp_path / ".editor-swap.tmp"
    for p in (dead, live, other_host_fresh, other_host_old, mkstemp_old, not_ours_old):
        p.write_bytes(b"partial")
    seven_hours_ago = time.time() - 7 * 3600
    for p in (other_host_old, mkstemp_old, not_ours_old):
        os.utime(p, (seven_hours_ago, seven_hours_ago))
    assert STALE_TMP_AGE_S == 6 * 3600
    assert remove_stale_tmp_files(tmp_path) == sorted([dead, other_host_old, mkstemp_old])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other_host_fresh.name, not_ours_old.name])


def test_load_or_build_cleans_stale_tmp_files(tmp_path: Path) -> None:
    stale = tmp_path / ".c.pt.k2j3_x9a.tmp"
    stale.write_bytes(b"x" * 100)
    os.utime(stale, (0, 0))
    load_or_build(tmp_path / "c.pt", lambda: 1)
    assert not stale.exists()


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_cache_files_follow_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    """Cache files take the user's umask (a cache shared by a group), not mkstemp's 0600."""
    old = os.umask(umask)
    try:
        atomic_torch_save(torch.ones(2), tmp_path / "c.pt")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "c.pt").stat().st_mode) == mode


def test_cache_dir_under_a_file_is_a_config_error(tmp_path: Path) -> None:
    """A cache dir that cannot be created is one ConfigError that names the fix, not a traceback."""
    (tmp_path / "afile").write_text("")
    cache_dir = tmp_path / "afile" / "cache"
    with pytest.raises(ConfigError) as err:
        load_or_build(cache_dir / "c.pt", lambda: 1)
    assert str(err.value) == (
        f"cache directory {cache_dir} is not writable (cannot create it: Not a directory); "
        "set paths.cache_dir=<a writable directory> (or env GRAPHBENCH_CACHE)"
    )


def test_cache_dir_that_is_a_file_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    with pytest.raises(ConfigError, match="is not writable \\(it is a file, not a directory\\)"):
        require_writable_dir(tmp_path / "afile")


def test_cache_dir_without_write_permission_is_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Root ignores permission bits, so the access check itself is made to say no."""
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    with pytest.raises(ConfigError, match=r"is not writable \(no write permission\); set paths.cache_dir="):
        load_or_build(tmp_path / "c.pt", lambda: 1)


def test_concurrent_jobs_rebuild_an_unreadable_entry_once(tmp_path: Path) -> None:
    """The jobs of a sweep sharing a corrupt entry: one moves it aside and rebuilds, the others load."""
    (tmp_path / "c.pt").write_bytes(b"not a torch file")
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_build_in_process, args=(str(tmp_path / "c.pt"), str(tmp_path), i)) for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    assert all(p.exitcode == 0 for p in procs)
    assert len(list(tmp_path.glob("built-*"))) == 1
    assert [p.read_bytes() for p in tmp_path.glob("c.pt.corrupt-*")] == [b"not a torch file"]


def test_builds_leave_no_lock_file(tmp_path: Path) -> None:
    """A build removes its ``.lock`` on release, whether it succeeded or raised."""
    load_or_build(tmp_path / "c.pt", lambda: 1)
    with pytest.raises(ValueError):
        load_or_build(tmp_path / "d.pt", lambda: (_ for _ in ()).throw(ValueError("boom")))
    assert [p.name for p in tmp_path.iterdir()] == ["c.pt"]


def test_cache_lock_holds_the_file_and_removes_it_on_release(tmp_path: Path) -> None:
    lock = tmp_path / "c.pt.lock"
    with cache_lock(lock):
        assert lock.exists()
    assert not lock.exists()
    lock.write_text("")  # left by a killed holder: taken over and removed
    with cache_lock(lock):
        pass
    assert not lock.exists()


def _count_under_lock(lock: str, counter: str, rounds: int) -> None:
    for _ in range(rounds):
        with cache_lock(Path(lock)):
            value = int(Path(counter).read_text())
            time.sleep(0.001)
            Path(counter).write_text(str(value + 1))


def test_cache_lock_is_exclusive_although_holders_remove_the_file(tmp_path: Path) -> None:
    """Each holder unlinks the lock file; a waiter that then gets the unlinked inode must not enter
    beside the holder of the new file. Lost increments would show a broken exclusion."""
    counter = tmp_path / "counter"
    counter.write_text("0")
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_count_under_lock, args=(str(tmp_path / "c.lock"), str(counter), 25)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    assert all(p.exitcode == 0 for p in procs)
    assert counter.read_text() == "100"
    assert not (tmp_path / "c.lock").exists()


def test_build_announcement_logs_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    announce = build_announcement(tmp_path / "toy-1.pt", "toy")
    with caplog.at_level(logging.INFO, logger="graphbench.data.store.cache"):
        announce()
        announce()
    assert [r.getMessage() for r in caplog.records] == [
        f"processing toy: building the processed cache {tmp_path / 'toy-1.pt'} ..."
    ]


def test_a_build_that_announces_itself_is_not_announced_before(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="graphbench.data.store.cache"), pytest.raises(ValueError):
        load_or_build(tmp_path / "c.pt", lambda: (_ for _ in ()).throw(ValueError("raw files missing")), "toy", announce=False)
    assert caplog.records == []
