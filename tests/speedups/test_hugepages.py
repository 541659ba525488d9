"""numpy_hugepages_off switches NumPy's huge-page advice off inside the block and restores it."""

from __future__ import annotations

import numpy as np
import pytest

from graphbench.speedups.hugepages import _set_advice, numpy_hugepages_off

pytestmark = pytest.mark.skipif(_set_advice is None, reason="this NumPy build has no huge-page advice setter")


@pytest.mark.parametrize("before", [True, False])
def test_off_inside_and_restored_after(before: bool) -> None:
    assert _set_advice is not None
    original = _set_advice(before)
    try:
        with numpy_hugepages_off():
            assert _set_advice(False) is False  # it was off
            assert np.zeros(1 << 20).sum() == 0  # arrays still work
        assert _set_advice(before) is before  # restored
    finally:
        _set_advice(original)


def test_restored_after_an_error() -> None:
    assert _set_advice is not None
    original = _set_advice(True)
    try:
        with pytest.raises(RuntimeError), numpy_hugepages_off():
            raise RuntimeError("boom")
        assert _set_advice(True) is True
    finally:
        _set_advice(original)
