"""Processed-data caches: written atomically under a file lock, so that the jobs of a job array
sharing one cache directory never see a half-written file and never build it twice.

Robustness rules (a cache is derived data: it can always be rebuilt, but is never silently lost):

- A cache entry that cannot be read (truncated, emptied, not a torch file) is named in one warning,
  renamed to ``<name>.corrupt-<timestamp>`` beside it (its bytes are kept for inspection) and rebuilt.
- A writer first writes ``.<name>.<host>-<pid>.<random>.tmp`` and renames it into place. A writer
  killed mid-write leaves that file behind; it is removed as *stale* by a later call when either
  (a) it was written on this host and its writer pid no longer runs, or (b) it has not been modified
  for :data:`STALE_TMP_AGE_S` (6 hours; covers other hosts and older names without a pid). A live
  writer is never removed: its pid runs, and a writer keeps modifying its file until the rename
  (saving takes minutes, not hours).
- Cache files are created with ``0o666`` filtered through the umask (and default ACLs), like any
  file a user writes, so a cache directory shared by a group stays usable by the group.
- A cache directory that cannot be created or written is a :class:`ConfigError` naming the fix.
- Builders take :func:`cache_lock` on ``<entry>.lock`` and remove that file when they release it, so
  a cache directory holds no lock files between builds (see :func:`cache_lock` for why removing a
  ``flock``-ed file is safe with the inode check on acquiring).
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import re
import secrets
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TypeVar

import torch

from graphbench.vocabulary.errors import ConfigError

T = TypeVar("T")

log = logging.getLogger(__name__)

#: a ``.tmp`` file in the cache dir that has not been modified for this long is stale
STALE_TMP_AGE_S: float = 6 * 3600.0


def cache_key(*parts: object) -> str:
    """A short stable hash of everything that determines a processed cache's content."""
    text = "\x1f".join(repr(p) for p in parts)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _writer_tag() -> str:
    """``<host>-<pid>`` of this process, as embedded in the names of its temporary files."""
    host = socket.gethostname().replace(".", "_").replace("-", "_") or "host"
    return f"{host}-{os.getpid()}"


def _not_writable(directory: Path, reason: str) -> ConfigError:
    return ConfigError(
        f"cache directory {directory} is not writable ({reason}); "
        "set paths.cache_dir=<a writable directory> (or env GRAPHBENCH_CACHE)"
    )


def require_writable_dir(directory: Path) -> None:
    """Create the cache ``directory`` if needed; raise a :class:`ConfigError` when that fails or it
    cannot be written (a path under a file, a read-only file system, no permission)."""
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise _not_writable(directory, "it is a file, not a directory") from None
    except OSError as exc:
        raise _not_writable(directory, f"cannot create it: {exc.strerror or exc}") from None
    if not os.access(directory, os.W_OK | os.X_OK):
        raise _not_writable(directory, "no write permission")


def atomic_write(path: Path, write: Callable[[IO[bytes]], None]) -> None:
    """Call ``write`` on a temporary file in ``path``'s directory, then rename it into place (atomic
    on POSIX).

    The temporary file is created with mode ``0o666`` minus the umask and is named
    ``.<name>.<host>-<pid>.<random>.tmp`` so that :func:`remove_stale_tmp_files` can tell whether
    its writer still runs.
    """
    path = Path(path)
    require_writable_dir(path.parent)
    while True:
        tmp = path.parent / f".{path.name}.{_writer_tag()}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
        except OSError as exc:
            raise _not_writable(path.parent, f"cannot create {tmp.name}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise ConfigError(
                f"could not write the cache file {path} ({exc.strerror or exc}); free space in "
                "its directory or set paths.cache_dir=<another writable directory> (or env GRAPHBENCH_CACHE)"
            ) from None
        raise


def atomic_torch_save(obj: Any, path: Path) -> None:
    """``torch.save`` through :func:`atomic_write`: readers see the old file or the whole new one."""
    atomic_write(path, lambda handle: torch.save(obj, handle))


@contextmanager
def cache_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the file ``path`` (created if needed) and remove the file on release.

    Removing a lock file is only safe with a check on acquiring, which this makes: the holder unlinks
    the path *while it still holds the lock*, so a waiter that then obtains the lock holds an inode
    that no longer is ``path``; it sees that (``path`` is gone or is another inode), lets go and
    locks the current file instead. So at most one process holds the lock on the inode that ``path``
    names, and a directory keeps no lock files between builds. A holder that is killed releases the
    ``flock`` with its process; the next holder takes the file it left and removes it. (``filelock``'s
    ``FileLock`` keeps the file on POSIX for want of this check, and ``SoftFileLock`` would stay
    locked forever after a crash.)
    """
    path = Path(path)
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise _not_writable(path.parent, f"cannot lock {path.name}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            held = os.fstat(fd)
            try:
                current = os.stat(path)
            except FileNotFoundError:
                current = None
        except BaseException:
            os.close(fd)
            raise
        if current is not None and (current.st_dev, current.st_ino) == (held.st_dev, held.st_ino):
            break
        os.close(fd)  # the previous holder removed this inode: lock the file that path names now
    try:
        yield
    finally:
        try:
            os.unlink(path)
        except OSError as exc:  # removed by hand meanwhile, or the directory turned read-only: harmless
            log.debug("could not remove the lock file %s: %s", path, exc)
        os.close(fd)


def _pid_runs(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it runs, as another user
        return True
    return True


#: the temporary files this module writes: ``.<entry>.<host>-<pid>.<8 hex>.tmp`` (entries end in ``.pt``
#: or ``.json``), and ``.<entry>.pt.<8 chars>.tmp`` names in ``tempfile.mkstemp``'s style, which a cache directory may hold
_TMP_NAME = re.compile(r"^\.(?P<entry>.+\.(?:pt|json))\.(?:(?P<host>[^.]+)-(?P<pid>\d+)\.[0-9a-f]{8}|[a-z0-9_]{8})\.tmp$")


def _stale_reason(tmp: Path, now: float) -> str | None:
    """Why ``tmp`` is stale (see the module docstring), or ``None`` when a writer may still own it."""
    match = _TMP_NAME.match(tmp.name)
    if match is None:  # not a file this module writes: never touched
        return None
    if match["pid"] is not None and match["host"] == _writer_tag().rpartition("-")[0] and not _pid_runs(int(match["pid"])):
        return f"its writer, pid {match['pid']} on this host, no longer runs"
    try:
        age = now - tmp.stat().st_mtime
    except FileNotFoundError:  # renamed into place or removed meanwhile
        return None
    if age > STALE_TMP_AGE_S:
        return f"not modified for {age / 3600:.1f} h"
    return None


def remove_stale_tmp_files(directory: Path) -> list[Path]:
    """Remove the temporary files that killed writers left in the cache ``directory`` and return them.

    Only temporary files of cache entries (``.<entry>.pt.<...>.tmp``, see :data:`_TMP_NAME`) are
    considered, so other files in a shared directory are never touched. One is stale when it was
    written on this host by a pid that no longer runs, or when it has not been modified for
    :data:`STALE_TMP_AGE_S`; files of live writers are kept.
    """
    directory = Path(directory)
    if not directory.is_dir():
        return []
    removed = []
    now = time.time()
    for tmp in sorted(directory.glob(".*.tmp")):
        reason = _stale_reason(tmp, now)
        if reason is None:
            continue
        try:
            tmp.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            log.debug("could not remove stale temporary cache file %s: %s", tmp, exc)
            continue
        log.info("removed stale temporary cache file %s (%s)", tmp, reason)
        removed.append(tmp)
    return removed


def _move_aside(path: Path) -> Path:
    """Rename an unreadable cache entry to ``<name>.corrupt-<timestamp>`` (never overwriting one)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    suffix = 1
    while target.exists():
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{suffix}")
        suffix += 1
    os.replace(path, target)
    return target


def _first_line(exc: BaseException) -> str:
    """``Type: first sentence of the message`` (torch appends paragraphs of advice to its errors)."""
    lines = str(exc).strip().splitlines()
    if not lines:
        return type(exc).__name__
    return f"{type(exc).__name__}: {lines[0].split('. ')[0].rstrip('.')}"


def _load(path: Path) -> Any:
    try:
        return torch.load(path, weights_only=False)
    except PermissionError:
        raise ConfigError(
            f"cannot read the cache file {path}: permission denied; ask its owner to make it readable "
            "(the cache is shared) or set paths.cache_dir=<your own directory> (or env GRAPHBENCH_CACHE)"
        ) from None


def load_or_build(path: Path, build: Callable[[], T], label: str | None = None, announce: bool = True) -> T:
    """Return the object cached at ``path``; build and cache it first if it is absent or unreadable.

    The lock (:func:`cache_lock` on ``<path>.lock``, removed again on release) makes concurrent
    callers wait for the first builder instead of building again; the atomic rename means a crash
    mid-build leaves no file behind, only the old state (and a temporary file that a later call
    removes, see :func:`remove_stale_tmp_files`). An entry that cannot be read is moved aside to
    ``<name>.corrupt-<timestamp>`` with one warning and rebuilt. ``label`` (e.g.
    ``"peptides-func (15,535 graphs)"``) names what is built in the log lines that announce a build
    and its duration (logger ``graphbench.data.store.cache``, INFO); with ``announce`` false, the
    first line is left to ``build`` (which can announce itself once its inputs are found, see
    :func:`build_announcement`).
    """
    path = Path(path)
    remove_stale_tmp_files(path.parent)
    if path.exists():
        try:
            return _load(path)
        except (ConfigError, MemoryError):
            raise
        except Exception as exc:
            log.debug("cache file %s not loaded without the lock (%s)", path, _first_line(exc))
    require_writable_dir(path.parent)
    with cache_lock(path.with_name(path.name + ".lock")):
        if path.exists():
            try:
                return _load(path)
            except (ConfigError, MemoryError):
                raise
            except Exception as exc:
                moved = _move_aside(path)
                log.warning(
                    "cache file %s cannot be read (%s); moved it to %s and rebuilding it", path, _first_line(exc), moved.name
                )
        if announce:
            build_announcement(path, label)()
        start = time.perf_counter()
        obj = build()
        atomic_torch_save(obj, path)
        log.info("processed %s in %.1f s", label or path.stem, time.perf_counter() - start)
        return obj


def build_announcement(where: Path | str, label: str | None = None) -> Callable[[], None]:
    """A callable that logs ``processing <label>: building the processed cache <where> ...`` the first
    time it is called (and does nothing after): a build calls it once its raw files are found, so
    that a build that cannot start (missing files) is not announced."""
    said = False

    def announce() -> None:
        nonlocal said
        if not said:
            said = True
            log.info("processing %s: building the processed cache %s ...", label or Path(where).stem, where)

    return announce
