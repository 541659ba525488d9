"""NumPy's transparent-huge-page advice, switched off around bulk array building."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

try:  # NumPy 2 (the pinned release); absent elsewhere, where the advice stays as it is
    from numpy._core.multiarray import _set_madvise_hugepage as _set_advice
except ImportError:  # pragma: no cover - depends on the NumPy build
    _set_advice: Callable[[bool], bool] | None = None  # type: ignore[no-redef]


@contextmanager
def numpy_hugepages_off() -> Iterator[None]:
    """NumPy allocates arrays with 4 KiB pages inside the block (restored afterwards, also on
    error); forked child processes inherit the setting.

    NumPy advises the kernel to back every array of 4 MiB or more with transparent huge pages
    (``madvise(MADV_HUGEPAGE)``; see ``NUMPY_MADVISE_HUGEPAGE`` in NumPy's documentation). Where
    free 2 MiB pages must first be assembled, the first write into such an array crawls. On this
    project's benchmark machine (a Firecracker VM), writing a fresh 166 MiB array took 1.1-1.8 s
    with the advice and 0.04-0.18 s without; building Peptides-func's dataset from its workers'
    chunks (x, edge_index, edge_attr: 360 MiB) took ~4 s with it and ~0.4 s without, in one
    script. NumPy's setter is private, so this is a no-op where it is missing. Torch's CPU
    allocator gives no such advice and is unaffected.
    """
    if _set_advice is None:
        yield
        return
    previous = _set_advice(False)
    try:
        yield
    finally:
        _set_advice(previous)
