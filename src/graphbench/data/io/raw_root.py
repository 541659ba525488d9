"""The data root a source reads its raw files from, and whether missing files may be downloaded."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from graphbench.data.io.archives import Archive, ensure_raw_files_from_archives
from graphbench.data.io.raw_files import RawFile, ensure_raw_files


@dataclass(frozen=True)
class LocateCall:
    """One :meth:`RawRoot.locate` call of a build: which files, under which name, from which archives.
    Replaying the calls of a build checks a data root exactly as that build did."""

    files: tuple[RawFile, ...]
    dataset: str
    archives: tuple[Archive, ...] = ()


def locate(data_dir: Path, call: LocateCall, download: bool) -> list[Path]:
    """The paths of ``call.files`` under ``data_dir``, checked (see :meth:`RawRoot.locate`)."""
    if call.archives:
        return ensure_raw_files_from_archives(data_dir, call.files, call.dataset, download, call.archives)
    return ensure_raw_files(data_dir, list(call.files), call.dataset, download)


@dataclass(frozen=True)
class RawRoot:
    """``data_dir`` (read-only: nothing but opted-in downloads is ever written there) and the
    ``download`` flag (``dataset.download``, false by default), handed to every source's ``build``.

    :meth:`locate` is the one way a source finds its raw files: it checks that every file is there
    (and its MD5, where published), downloads the missing ones only when ``download`` is true and the
    root is writable, and otherwise raises one error naming every missing file and where it goes.
    Every successful call is appended to :attr:`located` (what the processed cache's key covers, see
    :mod:`graphbench.data.io.raw_manifest`), and then ``on_located`` is called (e.g. to announce the
    build only once its raw files are found).
    """

    data_dir: Path
    download: bool = False
    on_located: Callable[[], None] | None = field(default=None, compare=False, repr=False)
    located: list[LocateCall] = field(default_factory=list, compare=False, repr=False)

    def __init__(self, data_dir: str | os.PathLike, download: bool = False, on_located: Callable[[], None] | None = None) -> None:
        object.__setattr__(self, "data_dir", Path(data_dir))
        object.__setattr__(self, "download", bool(download))
        object.__setattr__(self, "on_located", on_located)
        object.__setattr__(self, "located", [])

    def locate(self, files: Sequence[RawFile], dataset: str, archives: Sequence[Archive] = ()) -> list[Path]:
        """The paths of ``files`` (in order), checked; ``dataset`` names the data in error messages.
        Files without a URL of their own may come inside one of the zip ``archives``."""
        call = LocateCall(tuple(files), dataset, tuple(archives))
        paths = locate(self.data_dir, call, self.download)
        self.located.append(call)
        if self.on_located is not None:
            self.on_located()
        return paths

    def path(self, relpath: str) -> Path:
        """Where ``relpath`` is (or would be) under the data root, without checking it."""
        return self.data_dir / relpath
