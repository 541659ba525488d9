"""Lightning's default (pass-through) profiler, minus its cost per hook call."""

from __future__ import annotations

import contextlib

from lightning.pytorch.profilers import PassThroughProfiler

_NULL = contextlib.nullcontext()


class QuietProfiler(PassThroughProfiler):
    """What Lightning runs without ``trainer.profiler``: records nothing. Lightning wraps every hook call
    of every callback in ``profiler.profile(name)``, about 75 a training step with graphbench's
    callbacks; :class:`~lightning.pytorch.profilers.PassThroughProfiler` answers each with a new
    ``@contextmanager`` generator, this one with a shared null context."""

    def profile(self, action_name: str) -> contextlib.AbstractContextManager[None]:  # type: ignore[override]
        return _NULL
