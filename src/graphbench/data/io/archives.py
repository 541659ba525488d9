"""Raw files that are published inside a zip archive (PyG/OGB/LRGB/Benchmarking-GNNs downloads).

An :class:`Archive` maps a folder inside the zip onto a folder under the data root, the way the
official loaders rename it after extraction (e.g. ``molecules/`` -> ``ZINC/raw/``). With
``download: true`` (default false) and a writable data root, a missing file is fetched by downloading
its archive and extracting it; either way the final check is :func:`raw_files.ensure_raw_files`,
whose error names every missing file.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from graphbench.data.io.raw_files import (
    RawFile,
    _download,
    check_data_root,
    data_root_writable,
    ensure_raw_files,
    verify_md5,
)
from graphbench.vocabulary.errors import DataError


@dataclass(frozen=True)
class Archive:
    """A zip at ``url`` whose members under ``member_prefix`` belong under ``target_dir`` of the data root."""

    url: str
    member_prefix: str
    target_dir: str
    md5: str | None = None

    def covers(self, relpath: str) -> bool:
        return PurePosixPath(relpath).is_relative_to(PurePosixPath(self.target_dir))


def extract_archive(zip_path: Path, archive: Archive, data_dir: Path) -> list[Path]:
    """Extract the members under ``archive.member_prefix`` into ``data_dir / archive.target_dir``
    (each file written to a temporary name, then renamed). Members that would land outside the
    target folder are refused."""
    target = (Path(data_dir) / archive.target_dir).resolve()
    written = []
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            if info.is_dir() or not info.filename.startswith(archive.member_prefix):
                continue
            rel = info.filename[len(archive.member_prefix) :]
            dest = (target / rel).resolve()
            if not dest.is_relative_to(target):
                raise DataError(f"{zip_path}: member {info.filename!r} would be written outside {target}")
            dest.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
            with zf.open(info) as src, os.fdopen(fd, "wb") as out:
                shutil.copyfileobj(src, out)
            os.replace(tmp, dest)
            written.append(dest)
    if not written:
        raise DataError(f"{zip_path}: no member under {archive.member_prefix!r}; is this the official archive?")
    return written


def _fetch(archive: Archive, data_dir: Path, timeout_s: float) -> None:
    Path(data_dir).mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=data_dir, prefix=".download-", suffix=".zip")
    os.close(fd)
    zip_path = Path(tmp)
    try:
        _download(archive.url, zip_path, timeout_s)
        if archive.md5 is not None:
            verify_md5(zip_path, archive.md5)
        extract_archive(zip_path, archive, data_dir)
    finally:
        zip_path.unlink(missing_ok=True)


def ensure_raw_files_from_archives(
    data_dir: Path,
    files: Sequence[RawFile],
    dataset: str,
    download: bool,
    archives: Sequence[Archive] = (),
    timeout_s: float = 30.0,
) -> list[Path]:
    """Like :func:`ensure_raw_files`, for files that (also) come inside archives.

    A file inside an archive has no URL of its own; when it is missing, ``download`` is true and the
    data root is writable, the archive is downloaded and extracted. Files with their own URL are handled by ``ensure_raw_files``.
    """
    data_dir = Path(data_dir)
    check_data_root(data_dir)
    missing = [f.relpath for f in files if not (data_dir / f.relpath).exists()]
    failures: list[str] = []
    if missing and download and data_root_writable(data_dir):
        for archive in archives:
            if any(archive.covers(m) for m in missing):
                try:
                    _fetch(archive, data_dir, timeout_s)
                except (OSError, zipfile.BadZipFile, DataError) as exc:
                    failures.append(f"{archive.url}: {exc}")
    try:
        return ensure_raw_files(data_dir, list(files), dataset, download, timeout_s)
    except DataError as exc:
        still = [f.relpath for f in files if not (data_dir / f.relpath).exists()]
        covering = [a for a in archives if any(a.covers(m) for m in still)]
        if not covering and not failures:
            raise
        text = str(exc)
        if covering:
            text += "\nThe missing files are published in the official archive(s):\n" + "\n".join(
                f"  - {a.url} (unzip "
                + (f"its '{a.member_prefix}' folder" if a.member_prefix else "it")
                + f" into {data_dir / a.target_dir})"
                for a in covering
            )
            if not download:
                text += (
                    "\nWith dataset.download=true, they would be downloaded and unzipped there (the data root must be writable)."
                )
            elif not data_root_writable(data_dir):
                text += f"\ndataset.download=true cannot fetch them: the data root {data_dir.resolve()} is not writable."
        if failures:
            text += "\nArchive download failed:\n  " + "\n  ".join(failures)
        raise DataError(text) from None
