"""Files a run writes whole: a temporary file beside the target, renamed over it once complete.

A run can be killed at any moment (SIGKILL, a node lost); a file written in place can then be left
half-written, and a resumed run or a reader would find a truncated CSV or an archive that does not open.
Written through :func:`replace_atomically`, every such file is either the old one or the whole new one
(``rename`` is atomic on POSIX within one file system). What a kill can leave is a temporary file,
named ``.<name>.<pid>.tmp`` (:data:`PARTIAL_SUFFIXES`), which readers ignore as partial.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

#: how the temporary files of an unfinished write end (``.tmp``: this module and the record; ``.partial``:
#: the in-memory last checkpoint, graphbench.callbacks.last_checkpoint)
PARTIAL_SUFFIXES: tuple[str, ...] = (".tmp", ".partial")
#: the name :func:`temporary_name` gives
TEMPORARY = re.compile(r"\..+\.\d+\.tmp")


def temporary_name(path: Path) -> Path:
    """``.<name>.<pid>.tmp`` beside ``path``: this process's temporary file for it."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def replace_atomically(path: Path | str, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` to write the whole file at a temporary path beside ``path``, then rename it
    over ``path``. When ``write`` raises, the temporary file is removed and ``path`` is left as it was."""
    path = Path(path)
    tmp = temporary_name(path)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def is_partial(path: Path | str) -> bool:
    """Whether ``path`` names the temporary file of a write that never finished (see :func:`replace_atomically`)."""
    return Path(path).name.endswith(PARTIAL_SUFFIXES)


def remove_partial_files(directory: Path | str) -> list[Path]:
    """Remove the temporary files of unfinished writes in ``directory`` (not below it): those
    :func:`replace_atomically` names (``.<name>.<pid>.tmp``) and ``*.partial``; the paths removed. For
    a directory whose writer is gone: a run directory that a resumed run owns alone."""
    folder = Path(directory)
    if not folder.is_dir():
        return []
    found = [p for p in folder.iterdir() if p.is_file() and (TEMPORARY.fullmatch(p.name) or p.name.endswith(".partial"))]
    for path in found:
        path.unlink(missing_ok=True)
    return sorted(found)
