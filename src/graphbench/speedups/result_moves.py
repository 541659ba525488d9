"""``self.log`` without Lightning's device move of a result that is already on the device.

Lightning 2.6's ``_ResultCollection.log`` calls ``_ResultMetric.to(value.device)`` at every
``self.log``. That method rebuilds the result's whole attribute dict through
``lightning_utilities.apply_to_collection`` (about 50 entries: torchmetrics' and ``nn.Module``'s
bookkeeping, the metadata dataclass deep-copied), moving tensors that are, after the first call,
already there: ~0.2 ms a call on an idle core and ~0.5 ms in a run (graphbench logs five figures
an epoch), a sixth of a whole Cora epoch. Lightning offers no hook for it (the result objects are
built inside its loops), so :func:`installed` wraps that one method for the length of a run: when
every tensor the result holds already lies on the requested device the move is skipped, otherwise
Lightning's own method runs unchanged. ``_ResultMetric`` is Lightning's private class, so the patch
is made only on the Lightning releases it was tested with (:data:`TESTED_LIGHTNING`); on any other
it is skipped with a log line.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import lightning
import torch
from lightning.pytorch.trainer.connectors.logger_connector.result import _ResultMetric
from torch import Tensor
from torchmetrics import Metric

log = logging.getLogger(__name__)

#: the Lightning releases whose ``_ResultMetric.to`` and ``_ResultCollection.log`` this patch was tested on
TESTED_LIGHTNING: tuple[str, ...] = ("2.6.6",)

_lightning_to = _ResultMetric.to


def all_on(obj: Any, device: torch.device) -> bool:
    """Whether every tensor in ``obj`` lies on ``device``, looking through dicts, lists, tuples, sets
    and dataclasses as ``apply_to_collection`` does; False for a nested ``Metric`` (Lightning moves
    those through ``Metric.to``, which this does not reproduce)."""
    if isinstance(obj, Tensor):
        return obj.device == device
    if isinstance(obj, Metric):
        return False
    if isinstance(obj, dict):
        return all(all_on(value, device) for value in obj.values())
    if isinstance(obj, list | tuple | set | frozenset):
        return all(all_on(value, device) for value in obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return all(all_on(getattr(obj, field.name), device) for field in dataclasses.fields(obj))
    return True


def _to_unless_there(self: _ResultMetric, *args: Any, **kwargs: Any) -> _ResultMetric:
    # the call self.log makes: one positional torch.device; any other form goes to Lightning
    if len(args) == 1 and not kwargs and isinstance(args[0], torch.device) and all_on(self.__dict__, args[0]):
        return self
    return _lightning_to(self, *args, **kwargs)


def install() -> None:
    """Makes ``_ResultMetric.to`` skip moves to the device its tensors already lie on (idempotent,
    for the whole process; :func:`installed` scopes it to a run)."""
    _ResultMetric.to = _to_unless_there  # type: ignore[method-assign]


@contextmanager
def installed(version: str = lightning.__version__) -> Iterator[bool]:
    """:func:`install` inside the block, the method as it was after it (also on error), on a tested
    Lightning ``version``; on another, the block runs with Lightning's method and a log line. Yields
    whether the patch is in place."""
    if version not in TESTED_LIGHTNING:
        log.info("speed-ups: Lightning %s is not one of %s, its result objects are left as they are", version, TESTED_LIGHTNING)
        yield False
        return
    previous = _ResultMetric.to
    install()
    try:
        yield True
    finally:
        _ResultMetric.to = previous  # type: ignore[method-assign]
