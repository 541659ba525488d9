"""The data root a source reads its raw files from, and whether missing files may be downloaded."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from graphbench.data.io.archives import Archive, ensure_raw_files_from_archives
from graphbench.data.io.raw_files import RawFile, ensure_raw_files


@dataclass(frozen=True)
class RawRoot:
    """``data_dir`` (read-only: nothing but opted-in downloads is ever written there) and the
    ``download`` flag (``dataset.download``, false by default), handed to every source's ``build``.

    :meth:`locate` is the one way a source finds its raw files: it checks that every file is there
    (and its MD5, where published), downloads the missing ones only when ``download`` is true and the
    root is writable, and otherwise raises one error naming every missing file and where it goes.
    """

    data_dir: Path
    download: bool = False

    def __init__(self, data_dir: str | os.PathLike, download: bool = False) -> None:
        object.__setattr__(self, "data_dir", Path(data_dir))
        object.__setattr__(self, "download", bool(download))

    def locate(self, files: Sequence[RawFile], dataset: str, archives: Sequence[Archive] = ()) -> list[Path]:
        """The paths of ``files`` (in order), checked; ``dataset`` names the data in error messages.
        Files without a URL of their own may come inside one of the zip ``archives``."""
        if archives:
            return ensure_raw_files_from_archives(self.data_dir, files, dataset, self.download, archives)
        return ensure_raw_files(self.data_dir, list(files), dataset, self.download)

    def path(self, relpath: str) -> Path:
        """Where ``relpath`` is (or would be) under the data root, without checking it."""
        return self.data_dir / relpath
