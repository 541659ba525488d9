"""Pausing Python's cyclic garbage collector around bulk work that allocates many acyclic objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disables the cyclic collector inside the block (restored afterwards, also on error).

    For loops that allocate ~10^5 short-lived or acyclic objects (RDKit wrappers, per-graph
    ``Data`` copies and tensors): each allocation burst triggers collections that scan every
    live object of the process again (a loaded dataset is millions of them), while reference
    counting alone frees these objects.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
