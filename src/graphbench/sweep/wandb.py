r"""Hydra's sweep syntax as a W&B sweep configuration (pure functions: no config composition here).

Each Hydra override becomes one W&B parameter, named by its key (with a ``+``/``++`` prefix if it has
one, since the agent passes ``<name>=<value>`` verbatim), so that the W&B agent's
``${args_no_hyphens}`` gives ``run.py`` the same overrides back:

==============================================  ==========================================================
Hydra                                           W&B parameter
==============================================  ==========================================================
``key=value``                                   ``{value: value}`` (a constant)
``key=a,b,c``, ``key=choice(a,b,c)``            ``{values: [a, b, c]}`` (also ``shuffle(...)``, ``sort(...)``)
``key=range(start,stop,step)``                  ``{values: [start, start + step, ...]}`` (``stop`` excluded, as in Hydra)
``key=interval(low,high)``                      ``{distribution: uniform, min: low, max: high}``
``key=tag(log, interval(low,high))``            ``{distribution: log_uniform_values, min: low, max: high}``
==============================================  ==========================================================

Numbers and booleans stay numbers and booleans (W&B plots them on numeric axes); every other value
is written as Hydra text (a constant as typed; a choice's elements as Hydra writes them: ``null``,
``[1,2]``, ``'a b'``), which Hydra parses back to the same value. As in Hydra, ``interval`` samples floats: sweep integers with ``choice`` or ``range``.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import yaml
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import ChoiceSweep, IntervalSweep, Override, RangeSweep, Transformer
from hydra.errors import HydraException

from graphbench.vocabulary.errors import GraphbenchError

#: the sweep methods of W&B that graphbench writes
METHODS: tuple[str, ...] = ("grid", "random", "bayes")
#: the program the W&B agent starts, relative to the directory the agent runs in (the repository root)
PROGRAM: str = "run.py"
#: W&B's convention for Hydra programs: ``key=value`` arguments, no ``--``
COMMAND: list[str] = ["${env}", "${interpreter}", "${program}", "${args_no_hyphens}"]
#: the forms a sweep override may take, for error messages
VALID_FORMS: str = (
    "key=value, key=a,b,c, key=choice(a,b,c), key=range(start,stop[,step]), key=interval(low,high), "
    "key=tag(log, interval(low,high))"
)


class SweepError(GraphbenchError):
    """A sweep override or a sweep configuration that cannot become a valid W&B sweep."""


def _wandb_value(element: Any) -> Any:
    """A parsed Hydra element as a W&B value whose ``str()`` Hydra parses back to the same element."""
    if isinstance(element, (bool, int, float)):
        return element
    return Transformer.str(element)  # null, [1,2], {a:1}, 'quoted', escaped\ text


def _clean_float(value: Any) -> Any:
    """``0.30000000000000004`` -> ``0.3``: range() accumulates float error that nobody means."""
    return float(f"{value:.12g}") if isinstance(value, float) else value


def _parse(text: str) -> Override:
    try:
        return OverridesParser.create().parse_override(text)
    except HydraException as exc:
        detail = " ".join(str(exc).split())
        raise SweepError(f"cannot parse {text!r} ({detail}); valid forms: {VALID_FORMS}") from None


def parse_override(text: str, groups: Collection[str] = ()) -> tuple[str, dict[str, Any]]:
    """One Hydra override -> ``(W&B parameter name, W&B parameter spec)``.

    ``groups`` are the config groups (``model``, ``hydra/launcher``, ...): ``++model=gcn`` would set
    ``model`` to the string ``gcn`` instead of selecting ``conf/model/gcn.yaml``, so a prefixed
    override of a group is refused.

    >>> parse_override("optimizer.lr=tag(log, interval(1e-4, 1e-2))")
    ('optimizer.lr', {'distribution': 'log_uniform_values', 'min': 0.0001, 'max': 0.01})
    """
    override = _parse(text)
    name = override.get_key_element()
    if override.is_delete():
        raise SweepError(f"{text!r}: W&B's agent can only set keys (key=value), not delete them; valid forms: {VALID_FORMS}")
    if (override.is_add() or override.is_force_add()) and override.key_or_group in groups:
        raise SweepError(
            f"{text!r}: a '+'/'++' prefix does not select a config group (it would set {override.key_or_group!r} to a string); "
            f"write {override.key_or_group}={text.split('=', 1)[-1]}"
        )
    if not override.is_sweep_override():
        value = override.value()
        if isinstance(value, (bool, int, float)):
            return name, {"value": value}
        return name, {"value": override.get_value_string().strip()}  # as typed: Hydra parsed it, and will again
    value = override.value()
    if isinstance(value, ChoiceSweep):
        if any(isinstance(x, (ChoiceSweep, RangeSweep, IntervalSweep)) for x in value.list):
            raise SweepError(f"{text!r}: a choice of sweeps is not a W&B parameter; valid forms: {VALID_FORMS}")
        return name, {"values": [_wandb_value(x) for x in value.list]}  # shuffle(...) has no meaning for W&B
    if isinstance(value, RangeSweep):
        elements = list(override.sweep_iterator(transformer=Transformer.identity))
        if not elements:
            raise SweepError(f"{text!r} is empty (range stops before it starts)")
        return name, {"values": [_clean_float(x) for x in elements]}
    if isinstance(value, IntervalSweep):
        low, high = float(value.start), float(value.end)
        unknown = set(value.tags) - {"log"}
        if unknown:
            raise SweepError(f"{text!r}: unknown tag {sorted(unknown)}; only tag(log, interval(low,high)) is understood")
        if not low < high:
            raise SweepError(f"{text!r}: interval(low,high) needs low < high")
        if "log" in value.tags:
            if low <= 0:
                raise SweepError(f"{text!r}: a log-uniform interval needs 0 < low")
            return name, {"distribution": "log_uniform_values", "min": low, "max": high}
        return name, {"distribution": "uniform", "min": low, "max": high}
    raise SweepError(f"{text!r}: {type(value).__name__} is not a W&B parameter; valid forms: {VALID_FORMS}")


def parameters_from_overrides(overrides: Sequence[str], groups: Collection[str] = ()) -> dict[str, dict[str, Any]]:
    """W&B parameters of a list of Hydra overrides; as in Hydra, of several overrides of one key the
    last one counts."""
    parameters: dict[str, dict[str, Any]] = {}
    for text in overrides:
        name, spec = parse_override(text, groups)
        parameters.pop(name, None)
        parameters[name] = spec
    return parameters


def is_discrete(spec: Mapping[str, Any]) -> bool:
    """Whether a W&B parameter is a list of values or a constant (a grid can enumerate it)."""
    return "values" in spec or "value" in spec


def first_value(spec: Mapping[str, Any]) -> Any:
    """The value a parameter takes in the first grid point (``min`` for a distribution)."""
    if "value" in spec:
        return spec["value"]
    if "values" in spec:
        return spec["values"][0]
    return spec["min"]


def agent_arguments(parameters: Mapping[str, Mapping[str, Any]], pick: Any = first_value) -> list[str]:
    """The ``${args_no_hyphens}`` that W&B's agent builds (``f"{name}={value}"``), with each parameter
    at ``pick(spec)``: by default the first grid point."""
    return [f"{name}={pick(spec)}" for name, spec in parameters.items()]


def sweep_config(
    parameters: Mapping[str, Mapping[str, Any]],
    *,
    metric: str,
    maximize: bool,
    method: str | None = None,
    name: str | None = None,
    project: str | None = None,
) -> dict[str, Any]:
    """The W&B sweep configuration: ``run.py`` with ``${args_no_hyphens}``, the metric and its goal.

    ``method`` defaults to ``grid`` when every parameter is discrete and to ``random`` otherwise.
    """
    if not parameters:
        raise SweepError(f"nothing to sweep: give at least one override ({VALID_FORMS})")
    if method is None:
        method = "grid" if all(is_discrete(s) for s in parameters.values()) else "random"
    if method not in METHODS:
        raise SweepError(f"method {method!r} is not one of {list(METHODS)}")
    if method == "grid":
        continuous = [n for n, s in parameters.items() if not is_discrete(s)]
        if continuous:
            raise SweepError(
                f"a grid needs discrete parameters; {continuous} are intervals: use choice/range, or method random or bayes"
            )
    sweep: dict[str, Any] = {}
    if name:
        sweep["name"] = name
    if project:
        sweep["project"] = project
    sweep.update(
        program=PROGRAM,
        method=method,
        metric={"name": metric, "goal": "maximize" if maximize else "minimize"},
        parameters={n: dict(s) for n, s in parameters.items()},
        command=list(COMMAND),
    )
    return sweep


def validate(sweep: Mapping[str, Any]) -> None:
    """Check ``sweep`` with W&B's own validator (the ``sweeps`` package, offline); raises
    :class:`SweepError` listing every violation."""
    try:
        with warnings.catch_warnings():  # sweeps 0.2 declares pydantic-v1 model options; harmless under v2
            warnings.simplefilter("ignore")
            from sweeps import schema_violations_from_proposed_config
    except ImportError:
        raise SweepError("the W&B sweep validator is missing: pip install 'sweeps>=0.2.0' (a dependency of graphbench)") from None
    violations = schema_violations_from_proposed_config(dict(sweep))
    if violations:
        raise SweepError("W&B rejects this sweep: " + "; ".join(" ".join(v.split()) for v in violations))


def to_yaml(sweep: Mapping[str, Any]) -> str:
    """The sweep as the YAML file ``wandb sweep`` reads, keys in the order written."""
    return yaml.safe_dump(dict(sweep), sort_keys=False, default_flow_style=False)
