"""gc_paused: the collector is off inside the block and back to its previous state after it."""

from __future__ import annotations

import gc

import pytest

from graphbench.speedups.gc_pause import gc_paused


@pytest.fixture
def restore_gc():
    enabled = gc.isenabled()
    yield
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_paused_inside_and_restored_after_error(restore_gc):
    gc.enable()
    with pytest.raises(RuntimeError), gc_paused():
        assert not gc.isenabled()
        raise RuntimeError
    assert gc.isenabled()


def test_leaves_a_disabled_collector_disabled(restore_gc):
    gc.disable()
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
