"""Official raw files under a read-only data root: where they must be, their checksums, opt-in downloads.

This is the only module that downloads (:func:`ensure_raw_files`, also for the archives of
:mod:`~graphbench.data.io.archives`); sources reach it through :class:`~graphbench.data.io.raw_root.RawRoot`.
"""

from __future__ import annotations

import hashlib
import os
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from graphbench.vocabulary.errors import ConfigError, DataError


@dataclass(frozen=True)
class RawFile:
    """One official raw file: where it lives under the data root, its MD5 and its source URL."""

    relpath: str
    md5: str | None = None
    url: str | None = None


def md5sum(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.md5()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def md5_mismatch(path: Path, actual: str, expected: str) -> DataError:
    """The error for a file whose MD5 ``actual`` differs from the published ``expected``."""
    return DataError(
        f"{path} is corrupted or not the official file: MD5 {actual}, expected {expected}. "
        "Replace it with the official file (delete it and re-download)."
    )


def verify_md5(path: Path, expected: str) -> None:
    """Raise a :class:`DataError` naming the file when its MD5 differs from the published one."""
    actual = md5sum(path)
    if actual != expected:
        raise md5_mismatch(path, actual, expected)


def _download(url: str, dest: Path, timeout_s: float) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".part")
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response, open(tmp, "wb") as out:
            while block := response.read(1 << 20):
                out.write(block)
        tmp.replace(dest)
    finally:
        tmp.unlink(missing_ok=True)


def check_data_root(data_dir: Path) -> None:
    """Raise a :class:`ConfigError` when ``data_dir``, or the nearest folder above it that exists, is
    a file: then no raw file can be found there (or downloaded there), whatever the dataset."""
    data_dir = Path(data_dir)
    for candidate in (data_dir, *data_dir.parents):
        if candidate.exists():
            if candidate.is_dir():
                return
            where = "" if candidate == data_dir else f" ({candidate} is a file)"
            raise ConfigError(
                f"paths.data_dir={data_dir} is a file, not a directory{where}; point paths.data_dir "
                "(env GRAPHBENCH_DATA) at the folder that holds the raw files"
            )


def data_root_writable(data_dir: Path) -> bool:
    """Whether downloads could be written under ``data_dir``: the nearest existing folder at or
    above it is writable (a read-only mount or a folder without write permission is not)."""
    for candidate in (Path(data_dir), *Path(data_dir).parents):
        if candidate.exists():
            return candidate.is_dir() and os.access(candidate, os.W_OK | os.X_OK)
    return False


def _how_many_missing(missing: int, total: int) -> str:
    """``none of its 8 files is there``, ``3 of its 8 files are missing``, ..."""
    if total == 1:
        return "its one file is not there"
    if missing == total:
        return f"none of its {total} files is there"
    return f"{missing} of its {total} files {'is' if missing == 1 else 'are'} missing"


def ensure_raw_files(data_dir: Path, files: list[RawFile], dataset: str, download: bool, timeout_s: float = 10.0) -> list[Path]:
    """Locate (and verify) the raw files of ``dataset`` under ``data_dir``.

    Raw data is only read from ``data_dir``, except that with ``download`` true (the YAMLs' default
    is false) missing files are downloaded there from their official URL, when the data root is
    writable and the network allows. Otherwise one :class:`DataError` lists every missing file and
    where it must go, and says whether ``dataset.download=true`` would fetch it. A ``data_dir`` that
    is a file is a :class:`ConfigError`.
    """
    check_data_root(data_dir)
    root = Path(data_dir).resolve()
    paths = [Path(data_dir) / f.relpath for f in files]
    missing = [(f, p) for f, p in zip(files, paths) if not p.exists()]
    failures: list[str] = []
    writable = data_root_writable(data_dir)
    if missing and download and writable:
        for f, p in missing:
            if f.url is None:
                continue
            try:
                _download(f.url, p, timeout_s)
            except OSError as exc:
                failures.append(f"{p}: download from {f.url} failed ({exc})")
        missing = [(f, p) for f, p in missing if not p.exists()]
    if missing:
        lines = "\n".join(f"  - {p}" + (f"  (official URL: {f.url})" if f.url else "") for f, p in missing)
        count = _how_many_missing(len(missing), len(files))
        fetchable = any(f.url is not None for f, _ in missing)
        if not fetchable:
            why = ""
        elif not download:
            why = f"\nWith dataset.download=true, the files with an official URL would be fetched into {root} (it must be writable)."
        elif not writable:
            why = f"\ndataset.download=true cannot fetch them: the data root {root} is not writable."
        else:
            why = ("\nDownload failed:\n  " + "\n  ".join(failures)) if failures else ""
        raise DataError(
            f"Raw files of {dataset} not found under data root {root} ({count}):\n{lines}\n"
            f"Put the official files there, or point paths.data_dir (env GRAPHBENCH_DATA) at a folder "
            f"that holds them.{why}"
        )
    for f, p in zip(files, paths):
        if f.md5 is not None:
            verify_md5(p, f.md5)
    return paths
