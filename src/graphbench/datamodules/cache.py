"""Processed-data caches: written atomically under a file lock, so that the jobs of a job array
sharing one cache directory never see a half-written file and never build it twice."""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, TypeVar

import torch
from filelock import FileLock

T = TypeVar("T")


def cache_key(*parts: object) -> str:
    """A short stable hash of everything that determines a processed cache's content."""
    text = "\x1f".join(repr(p) for p in parts)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def atomic_torch_save(obj: Any, path: Path) -> None:
    """Save to a temporary file in the same directory, then rename it into place (atomic on POSIX)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        torch.save(obj, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_or_build(path: Path, build: Callable[[], T]) -> T:
    """Return the object cached at ``path``; build and cache it first if it is absent.

    The lock makes concurrent callers wait for the first builder instead of building again; the
    atomic rename means a crash mid-build leaves no file behind, only the old state.
    """
    path = Path(path)
    if path.exists():
        return torch.load(path, weights_only=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        if path.exists():
            return torch.load(path, weights_only=False)
        obj = build()
        atomic_torch_save(obj, path)
        return obj
