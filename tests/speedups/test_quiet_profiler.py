"""QuietProfiler: Lightning's pass-through profiler with one shared null context."""

from __future__ import annotations

from lightning.pytorch.profilers import PassThroughProfiler

from graphbench.speedups.quiet_profiler import QuietProfiler


def test_profile_is_one_shared_null_context_and_records_nothing():
    profiler = QuietProfiler()
    assert isinstance(profiler, PassThroughProfiler)
    first, second = profiler.profile("[Callback]a.on_train_batch_end"), profiler.profile("run_training_batch")
    assert first is second
    with first as entered:
        assert entered is None
    with profiler.profile("nested"), profiler.profile("nested again"):
        pass
    assert profiler.summary() == ""
