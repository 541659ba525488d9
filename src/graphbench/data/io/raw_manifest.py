"""What a processed cache was built from: the raw files its build located, and their MD5s.

A processed cache's key covers the MD5s of the raw files that its build read, so a changed copy of a
dataset (one edited byte) is never served from the cache of the old one, and every run checks its
``paths.data_dir`` before it uses a cache: it replays the build's :meth:`RawRoot.locate` calls, with
the same errors as a build (a data root that is a file, every missing file named). Sources need to do
nothing for this: :class:`~graphbench.data.io.raw_root.RawRoot` records the calls. A source that
generates its data (cycles, SBM, syn-homophily) locates nothing; its key covers no raw files.

Hashing large raw files on every run would be slow, so the side file keeps a stamp (size,
``mtime_ns``) of each file beside its MD5, and the MD5 is recomputed only when the stamp changed (as
``make`` and git do). A stamp taken within :data:`RACY_NS` of the file's last modification is not
trusted, because a write within the same clock tick leaves ``mtime`` as it was (git's "racily clean"
entries); such a file is hashed again on the next run. The side file is
``<cache_dir>/<name>-<source key>.raw.json``::

    {"calls": [{"dataset": "Cora", "files": [{"relpath": ..., "md5": ..., "url": ...}, ...],
                "archives": [...]}],
     "stamps": {"<absolute path>": [size, mtime_ns, md5], ...}}

It is rewritten atomically; two jobs that update it at once lose one's stamps, which only costs a
hash on a later run.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from graphbench.data.io.archives import Archive
from graphbench.data.io.raw_files import RawFile, md5_mismatch, md5sum
from graphbench.data.io.raw_root import LocateCall, RawRoot, locate
from graphbench.data.store.cache import (
    atomic_torch_save,
    atomic_write,
    build_announcement,
    cache_key,
    cache_lock,
    load_or_build,
    require_writable_dir,
)

T = TypeVar("T")

log = logging.getLogger(__name__)

#: a stamp taken less than this long after the file's ``mtime`` is not trusted (2 s: coarse clocks
#: and file systems with 1-2 s timestamp resolution)
RACY_NS: int = 2_000_000_000

#: a stamp that is never trusted
_UNTRUSTED: int = -1


def _call_to_json(call: LocateCall) -> dict[str, Any]:
    return {
        "dataset": call.dataset,
        "files": [dataclasses.asdict(f) for f in call.files],
        "archives": [dataclasses.asdict(a) for a in call.archives],
    }


def _call_from_json(data: dict[str, Any]) -> LocateCall:
    return LocateCall(
        tuple(RawFile(**f) for f in data["files"]), str(data["dataset"]), tuple(Archive(**a) for a in data["archives"])
    )


class RawManifest:
    """The side file at ``path`` that records which raw files a build read and their MD5s."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def read(self) -> tuple[list[LocateCall], dict[str, list[Any]]] | None:
        """The recorded calls and stamps; ``None`` when no build recorded them (or the file is unreadable)."""
        try:
            data = json.loads(self.path.read_text())
            return [_call_from_json(c) for c in data["calls"]], dict(data["stamps"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.debug("raw-file record %s not read (%s); the next build rewrites it", self.path, exc)
            return None

    def digest(self, data_dir: Path, download: bool) -> str | None:
        """Check the recorded raw files under ``data_dir`` as their build did and return the digest of
        their MD5s; ``None`` when no build recorded them yet."""
        recorded = self.read()
        if recorded is None:
            return None
        calls, stamps = recorded
        digest, updated = self.check(data_dir, download, calls, stamps)
        if updated != stamps:
            self.write(calls, updated)
        return digest

    def file_md5s(self, data_dir: Path) -> dict[str, str]:
        """``{relpath: MD5}`` of the recorded raw files under ``data_dir``, sorted by path, from the
        stamps that :meth:`digest` (or a build) has just checked; a file without a stamp (another job
        rewrote the record meanwhile) is hashed. Empty when no build recorded any (generated data)."""
        recorded = self.read()
        if recorded is None:
            return {}
        calls, stamps = recorded
        md5s: dict[str, str] = {}
        for call in calls:
            for f in call.files:
                path = Path(data_dir) / f.relpath
                stamp = stamps.get(str(path.resolve()))
                md5s[f.relpath] = str(stamp[2]) if stamp is not None else md5sum(path)
        return dict(sorted(md5s.items()))

    def check(
        self, data_dir: Path, download: bool, calls: list[LocateCall], stamps: dict[str, list[Any]]
    ) -> tuple[str, dict[str, list[Any]]]:
        """Locate the files of ``calls`` under ``data_dir`` and return the digest of their MD5s and
        the updated ``stamps`` (see the module docstring); published MD5s are checked for the files
        whose MD5 is recomputed."""
        digests: set[tuple[str, str]] = set()
        updated = dict(stamps)
        for call in calls:
            # existence (and downloads) exactly as the build checked them; published MD5s below
            unhashed = LocateCall(tuple(dataclasses.replace(f, md5=None) for f in call.files), call.dataset, call.archives)
            paths = locate(Path(data_dir), unhashed, download)
            for f, path in zip(call.files, paths):
                key = str(path.resolve())
                md5, updated[key] = _md5_with_stamp(path, stamps.get(key))
                if f.md5 is not None and md5 != f.md5:
                    raise md5_mismatch(path, md5, f.md5)
                digests.add((f.relpath, md5))
        return cache_key(*sorted(digests)), updated

    def write(self, calls: list[LocateCall], stamps: dict[str, list[Any]]) -> None:
        """Replace the record (atomically) by ``calls`` and ``stamps``."""
        text = json.dumps({"calls": [_call_to_json(c) for c in calls], "stamps": stamps}, indent=1)
        atomic_write(self.path, lambda handle: handle.write(text.encode()))

    def record(self, data_dir: Path, calls: list[LocateCall]) -> str:
        """Record ``calls`` (a build's :attr:`RawRoot.located`) with the MD5s of their files under
        ``data_dir``, and return their digest."""
        recorded = self.read()
        digest, stamps = self.check(data_dir, False, calls, recorded[1] if recorded is not None else {})
        self.write(calls, stamps)
        return digest


def _md5_with_stamp(path: Path, known: list[Any] | None) -> tuple[str, list[Any]]:
    """The MD5 of ``path`` (from ``known`` = ``[size, mtime_ns, md5]`` when its stamp still matches)
    and the stamp to keep."""
    stat = path.stat()
    if known is not None and known[1] != _UNTRUSTED and [stat.st_size, stat.st_mtime_ns] == known[:2]:
        return str(known[2]), known
    md5 = md5sum(path)
    racy = time.time_ns() - stat.st_mtime_ns < RACY_NS
    return md5, [stat.st_size, _UNTRUSTED if racy else stat.st_mtime_ns, md5]


def load_or_build_from_raw(
    manifest_path: Path, entry: Callable[[str], Path], raw: RawRoot, build: Callable[[RawRoot], T], label: str
) -> tuple[T, str]:
    """Load the processed cache of the raw files under ``raw``, or build it; return it and the digest of
    its raw files' MD5s.

    ``entry(digest)`` is the cache file for that digest; ``build(raw)`` builds from the raw files it
    locates through ``raw``. With a record at ``manifest_path``, the recorded raw files are checked
    first (errors as a build's, see :meth:`RawManifest.digest`), then the entry is loaded or built by
    :func:`~graphbench.data.store.cache.load_or_build`. Without one (the first build in this cache
    directory), the build runs under a lock on the record, is announced once its first raw files are
    found, and records the files it located. A build that locates other files than the record names
    (a new optional file) updates the record, so that the next run's key covers them.
    """
    manifest = RawManifest(manifest_path)
    digest = manifest.digest(raw.data_dir, raw.download)
    if digest is None:
        require_writable_dir(manifest.path.parent)
        with cache_lock(manifest.path.with_name(manifest.path.name + ".lock")):
            digest = manifest.digest(raw.data_dir, raw.download)
            if digest is None:
                return _first_build(manifest, entry, raw, build, label)
    recorded = manifest.read()
    calls = recorded[0] if recorded is not None else []

    def rebuild() -> T:
        recording = RawRoot(raw.data_dir, raw.download)
        obj = build(recording)
        if recording.located != calls:
            manifest.record(raw.data_dir, recording.located)
        return obj

    return load_or_build(entry(digest), rebuild, label), digest


def _first_build(
    manifest: RawManifest, entry: Callable[[str], Path], raw: RawRoot, build: Callable[[RawRoot], T], label: str
) -> tuple[T, str]:
    announce = build_announcement(f"in {manifest.path.parent}", label)
    recording = RawRoot(raw.data_dir, raw.download, on_located=announce)
    start = time.perf_counter()
    obj = build(recording)
    announce()  # a source that generates its data locates nothing
    recorded = manifest.read()
    digest, stamps = manifest.check(raw.data_dir, False, recording.located, recorded[1] if recorded is not None else {})
    path = entry(digest)
    atomic_torch_save(obj, path)
    manifest.write(recording.located, stamps)  # after the entry: a run that reads the record finds the entry
    log.info("processed %s in %.1f s (%s)", label, time.perf_counter() - start, path.name)
    return obj, digest
