"""An Optuna search space from Hydra's sweep syntax, and the overrides of one trial.

``hydra.sweeper.params`` and the command line's overrides, in Hydra's override grammar, become:

| override | Optuna distribution |
|---|---|
| ``key=a,b,c``, ``key=choice(a,b,c)``, a shuffled range | ``CategoricalDistribution([a, b, c])`` |
| ``key=range(start,stop,step)`` (integers) | ``IntDistribution(start, last, step)``: ``last`` is the range's last value (stop excluded, as in Hydra) |
| ``key=range(...)`` with a float | ``FloatDistribution(start, last, step=step)`` |
| ``key=interval(low,high)`` | ``FloatDistribution(low, high)`` (Hydra's intervals are floats) |
| ``key=tag(log, interval(low,high))`` | ``FloatDistribution(low, high, log=True)`` |
| anything else (``key=value``, ``+key=value``, ``~key``) | not searched: passed to every trial as written |

A key given twice keeps its last form: the command line comes after the file's ``params``, so
``model.hidden_dim=32`` fixes a searched key and ``scheduler=plateau,cosine`` adds one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Glob, IntervalSweep, Override, RangeSweep, Transformer

from graphbench.sweep.wandb import SweepError

if TYPE_CHECKING:
    from optuna.distributions import BaseDistribution


def _plain_key(override: Override) -> str:
    """``+model.lr`` and ``model.lr`` are one key; ``model@x`` stays itself."""
    return override.get_key_element().lstrip("+~")


def distribution_of(override: Override) -> BaseDistribution:
    """The Optuna distribution of one sweep override (see the module docstring)."""
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    value = override.value()
    text = override.input_line
    if override.is_choice_sweep() or (override.is_range_sweep() and value.shuffle):
        return CategoricalDistribution(list(override.sweep_iterator(transformer=Transformer.encode)))
    if override.is_range_sweep():
        assert isinstance(value, RangeSweep)
        values = list(override.sweep_iterator())
        if not values:
            raise SweepError(f"{text!r} is empty (range stops before it starts)")
        if all(isinstance(v, int) for v in (value.start, value.stop, value.step)):
            return IntDistribution(int(values[0]), int(values[-1]), step=int(value.step))
        return FloatDistribution(float(values[0]), float(values[-1]), step=float(value.step))
    if override.is_interval_sweep():
        assert isinstance(value, IntervalSweep)
        unknown = set(value.tags) - {"log"}
        if unknown:
            raise SweepError(f"{text!r}: unknown tag {sorted(unknown)}; only tag(log, interval(low,high)) is understood")
        low, high = float(value.start), float(value.end)
        if not low < high:
            raise SweepError(f"{text!r}: interval(low,high) needs low < high")
        if "log" in value.tags and low <= 0:
            raise SweepError(f"{text!r}: a log-uniform interval needs 0 < low")
        return FloatDistribution(low, high, log="log" in value.tags)
    raise SweepError(f"{text!r}: {type(value).__name__} is not an Optuna search space; use choice, range or interval")


def format_value(value: Any) -> str:
    """A sampled value as Hydra's grammar reads it back: ``true``/``false``, ``null``, numbers by ``repr``;
    strings come from ``Transformer.encode`` and are written as they are."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        return repr(value)
    return str(value)


@dataclass(frozen=True)
class SearchSpace:
    """``distributions``: the searched keys; ``fixed``: the other overrides, as written, for every trial."""

    distributions: dict[str, BaseDistribution]
    fixed: list[str]

    @classmethod
    def parse(cls, overrides: Sequence[str]) -> SearchSpace:
        """The space of ``overrides`` (the file's ``params`` as ``key=value`` first, then the command line's).
        One :class:`SweepError` line for a sweep Optuna cannot sample."""
        try:
            parsed = OverridesParser.create().parse_overrides(list(overrides))
        except Exception as exc:
            raise SweepError(f"cannot parse the search space: {' '.join(str(exc).split())}") from None
        last: dict[str, Override] = {}
        for override in parsed:
            if isinstance(override.value(), Glob):
                raise SweepError(f"{override.input_line!r}: a glob is not an Optuna search space; use choice, range or interval")
            last.pop(_plain_key(override), None)  # the later form wins, and takes its place in the order
            last[_plain_key(override)] = override
        distributions = {key: distribution_of(o) for key, o in last.items() if o.is_sweep_override()}
        fixed = [o.input_line for o in last.values() if not o.is_sweep_override()]
        return cls(distributions, fixed)

    def overrides(self, params: Mapping[str, Any]) -> list[str]:
        """The overrides of a trial that sampled ``params``: the fixed ones, then ``key=value`` per searched key."""
        return [*self.fixed, *(f"{key}={format_value(params[key])}" for key in self.distributions)]


def params_overrides(params: Mapping[str, Any] | None) -> list[str]:
    """``hydra.sweeper.params`` (``{key: "choice(...)"}``) as overrides, ``key=value``."""
    return [f"{key}={value}" for key, value in (params or {}).items()]
