"""The schemas of the config keys a run reads outside the dataset node (whose schema is
:mod:`graphbench.data.datamodules.schema`): the top-level keys (:class:`RunConfig`), and the nodes of the
``model``, ``head``, ``pe``, ``budget``, ``trainer``, ``optimizer`` and ``speedups`` groups.

Each field is a key: its type, its default when a node may leave it out (a field without a default is a
key every composed node has) and a one-line comment; ``rules`` says what values a key takes beyond its
type (:class:`Rule`). A closed schema (``closed = True``) names every key of its node; an open one names the
keys graphbench reads, and the node's other keys are arguments of its ``_target_`` (Lightning's
``Trainer``, a torch optimizer), which that class checks. :func:`problems` holds a node against its
schema, with one line per wrong key naming the key, its value and what is valid;
:func:`graphbench.config.checks.check_config` runs it over a composed config before anything is built."""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar, Union


@dataclass(frozen=True)
class Rule:
    """The values a key takes beyond its type: ``holds(value)`` on a value of the right type, and what
    is valid in words (the end of an error message: ``must be <expected>``)."""

    expected: str
    holds: Callable[[Any], bool] = lambda value: True


POSITIVE = Rule("a positive integer", lambda value: value > 0)
NON_NEGATIVE = Rule("a non-negative integer", lambda value: value >= 0)
POSITIVE_NUMBER = Rule("a positive number", lambda value: value > 0)
NON_NEGATIVE_NUMBER = Rule("a non-negative number", lambda value: value >= 0)
PROBABILITY = Rule("a number in [0, 1)", lambda value: 0 <= value < 1)
SECONDS = Rule("a non-negative number of seconds", lambda value: value >= 0)
EPOCHS = Rule("an integer >= 1 (or -1: no limit)", lambda value: value >= 1 or value == -1)
POSITIVE_OR_NULL = Rule("a positive integer or null", lambda value: value is None or value > 0)


@dataclass(frozen=True)
class RunConfig:
    """The top-level keys of every run (``conf/config.yaml``); the others are group nodes or read by a task."""

    closed: ClassVar[bool] = False
    rules: ClassVar[dict[str, Rule]] = {"checkpoint_every_s": SECONDS}

    seed: int  # the seed of the weights, the data order and every random draw of the run
    checkpoint_every_s: float  # seconds between two writes of checkpoints/last.ckpt


@dataclass(frozen=True)
class ModelConfig:
    """The keys of a model node (``conf/model/*.yaml``, with ``conf/config.yaml``'s ``model:`` keys shared
    by every model): the network's arguments, and how it is initialized, compiled and trained."""

    closed: ClassVar[bool] = True
    rules: ClassVar[dict[str, Rule]] = {
        "hidden_dim": POSITIVE,
        "num_layers": NON_NEGATIVE,
        "dropout": PROBABILITY,
        "width_multiple": POSITIVE,
        "input_dropout": PROBABILITY,
    }

    name: str  # the model's name: run names, logs and the report's rows
    layer: dict[str, Any]  # the message-passing layer: _target_ a Layer class, _partial_: true, its arguments
    hidden_dim: int  # the width of every layer; a budget solves it instead
    num_layers: int  # message-passing layers
    dropout: float  # dropout after every layer
    activation: str  # the activation after every layer, by name (graphbench.modules.activations)
    residual: bool  # true: h + layer(h)
    pooling: str  # graph-level readout: mean, add or max
    width_multiple: int  # the width solved under a budget is a multiple of this
    compile: bool  # true: torch.compile the network's forward (graphbench.speedups.compile_network)
    compile_mode: str  # torch.compile's mode: default, reduce-overhead, max-autotune(-no-cudagraphs)
    edge_encoder: str  # auto: an edge encoder where a layer reads edge features; always: one all the same
    input_dropout: float = 0.0  # dropout on the encoded input features
    encode_inputs: bool = True  # false: the first layer reads the raw dense features
    last_layer_outputs: bool = False  # true: the last layer predicts the outputs; no head
    readout_layers: str = "last"  # all: the sum of a head per layer's pooled embedding, the input's included
    block: str = "full"  # full: h + Dropout(act(Norm(layer(h)))); residual: h + layer(h)
    init: str = "default"  # the weights' initialization: default (PyTorch's) or grand
    consistency: dict[str, Any] | None = None  # GRAND's consistency term (graphbench.modules.losses)


@dataclass(frozen=True)
class HeadConfig:
    """The keys of a prediction head node (``conf/head/*.yaml``: ``MLPHead``, or ``DotProductHead`` for links)."""

    closed: ClassVar[bool] = True
    rules: ClassVar[dict[str, Rule]] = {"num_layers": POSITIVE, "dropout": PROBABILITY}

    name: str  # the head's name: run names, logs and the report's rows
    num_layers: int  # linear maps; 1: a linear head
    activation: str = "relu"  # between the linear maps
    dropout: float = 0.0  # after every hidden layer (dropout_first: before every linear map)
    dropout_first: bool = False  # true: GraphGPS's MLPGraphHead order, Dropout -> Linear -> activation
    l2_normalize: bool = False  # true: GraphGym's order, L2-normalizing every hidden layer's rows


@dataclass(frozen=True)
class PEConfig:
    """The keys of a positional-encoding node (``conf/pe/*.yaml``): the transform that precomputes it,
    the encoder that adds it to the node embedding, and the knobs both interpolate."""

    closed: ClassVar[bool] = True
    rules: ClassVar[dict[str, Rule]] = {
        "k": POSITIVE_OR_NULL,
        "lappe_k": POSITIVE_OR_NULL,
        "rwse_k": POSITIVE_OR_NULL,
        "concat_dim": POSITIVE_OR_NULL,
    }

    name: str  # the encoding's name: run names, logs and the report's rows
    transform: dict[str, Any] | None  # the precomputing transform (a BaseTransform); null: none
    encoder: dict[str, Any] | None  # the encoder (_partial_: true); null: none
    k: int | None = None  # lappe: eigenvectors; rwse: random-walk steps
    lappe_k: int | None = None  # lappe+rwse: LapPE's eigenvectors
    rwse_k: int | None = None  # lappe+rwse: RWSE's random-walk steps
    laplacian: str | None = None  # lappe: sym (I - D^-1/2 A D^-1/2) or combinatorial (D - A)
    keep_trivial: bool | None = None  # lappe: true keeps the trivial eigenpair among the k
    concat_dim: int | None = None  # channels concatenated to the node embedding; null: added


@dataclass(frozen=True)
class BudgetConfig:
    """The keys of a parameter budget node (``conf/budget/*.yaml``)."""

    closed: ClassVar[bool] = True
    rules: ClassVar[dict[str, Rule]] = {"max_params": POSITIVE_OR_NULL}

    name: str  # the budget's name: run names, logs and the report's rows
    max_params: int | None  # the most parameters of the full model; null: no budget
    solve_width: bool = True  # false: keep model.hidden_dim, the budget only checked (callbacks.budget)


@dataclass(frozen=True)
class TrainerConfig:
    """The keys of the trainer node (``conf/trainer/*.yaml``) that graphbench reads or sets; any other
    argument of Lightning's ``Trainer`` may be added (``++trainer.<arg>=<value>``), which Lightning checks."""

    closed: ClassVar[bool] = False
    rules: ClassVar[dict[str, Rule]] = {
        "max_epochs": EPOCHS,
        "check_val_every_n_epoch": POSITIVE_OR_NULL,
        "log_every_n_steps": POSITIVE,
    }

    max_epochs: int  # training epochs
    check_val_every_n_epoch: int | None  # validation every n epochs
    accelerator: str  # auto, cpu, gpu or cuda (Lightning's names)
    log_every_n_steps: int  # steps between two logged training metrics
    enable_progress_bar: bool | str  # auto: a bar on a terminal, one line per epoch elsewhere
    max_time: str | None = None  # DD:HH:MM:SS, the most wall time training takes; null: no limit


@dataclass(frozen=True)
class OptimizerConfig:
    """The keys of the optimizer node (``conf/optimizer/*.yaml``) that every optimizer takes; its other
    keys are arguments of its ``_target_`` (a torch optimizer), which torch checks."""

    closed: ClassVar[bool] = False
    rules: ClassVar[dict[str, Rule]] = {"lr": POSITIVE_NUMBER, "weight_decay": NON_NEGATIVE_NUMBER}

    lr: float  # the learning rate
    weight_decay: float = 0.0  # L2 penalty (AdamW: decoupled decay)


@dataclass(frozen=True)
class SpeedupsConfig:
    """The keys of the speed-ups switch (``conf/speedups/*.yaml``)."""

    closed: ClassVar[bool] = True
    rules: ClassVar[dict[str, Rule]] = {}

    name: str  # auto or off
    enabled: bool  # true: the CPU kernels and Lightning patches of graphbench.speedups


#: the schema of each checked node of a composed config, by its path (``""``: the top level), in checking order
SCHEMAS: dict[str, type] = {
    "": RunConfig,
    "model": ModelConfig,
    "head": HeadConfig,
    "pe": PEConfig,
    "budget": BudgetConfig,
    "trainer": TrainerConfig,
    "optimizer": OptimizerConfig,
    "speedups": SpeedupsConfig,
}


def _types(annotation: Any) -> tuple[type, ...]:
    """The classes a value of ``annotation`` may be (``float`` takes an ``int``, ``Any`` takes everything)."""
    if annotation is Any:
        return (object,)
    if typing.get_origin(annotation) in (Union, types.UnionType):
        return tuple(t for arg in typing.get_args(annotation) for t in _types(arg))
    origin = typing.get_origin(annotation) or annotation
    if origin is float:
        return (int, float)
    if annotation is None or annotation is type(None):
        return (type(None),)
    return (origin,)


_WORDS: dict[type, str] = {
    int: "an integer",
    float: "a number",
    bool: "true or false",
    str: "a string",
    dict: "a node",
    type(None): "null",
}


def expected(annotation: Any, rule: Rule | None) -> str:
    """What is valid for a key of type ``annotation`` and ``rule``, in words (``a positive integer``)."""
    if rule is not None:
        return rule.expected
    words = [
        _WORDS.get(t, t.__name__) for t in dict.fromkeys(_types(annotation)) if t is not int or float not in _types(annotation)
    ]
    return " or ".join(words)


def valid(value: Any, annotation: Any, rule: Rule | None) -> bool:
    """Whether ``value`` is of ``annotation``'s type (a boolean is not a number) and ``rule`` holds."""
    allowed = _types(annotation)
    if object not in allowed and not isinstance(value, allowed):
        return False
    if isinstance(value, bool) and bool not in allowed and object not in allowed:
        return False
    return rule is None or rule.holds(value)


def problems(values: dict[str, Any], schema: type, path: str) -> list[str]:
    """One line for each key of ``values`` (a resolved node at ``path``) that ``schema`` refuses: a value
    of the wrong type or outside its rule (``model.hidden_dim=0 must be a positive integer``), a key every
    node has that is missing, and, for a closed schema, a key it does not name (with the closest valid one)."""
    hints = typing.get_type_hints(schema)
    prefix = f"{path}." if path else ""
    found = []
    names = [f.name for f in fields(schema)]
    for f in fields(schema):
        rule = schema.rules.get(f.name)  # type: ignore[attr-defined]
        if f.name not in values:
            if f.default is MISSING and f.default_factory is MISSING:
                found.append(
                    f"{prefix}{f.name} is missing: every {path or 'config'} node has it ({expected(hints[f.name], rule)})"
                )
            continue
        value = values[f.name]
        if not valid(value, hints[f.name], rule):
            found.append(f"{prefix}{f.name}={value!r} must be {expected(hints[f.name], rule)}")
    if schema.closed:  # type: ignore[attr-defined]
        for key in values:
            if key in names or key.startswith("_"):
                continue
            close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
            hint = f" (did you mean {prefix}{close[0]}?)" if close else ""
            found.append(f"{prefix}{key} is not a key of {path}{hint}; its keys: {', '.join(names)}")
    return found


def defaults(schema: type) -> dict[str, Any]:
    """The keys of ``schema`` that a node may leave out, with the values they then take."""
    out = {}
    for f in fields(schema):
        if f.default is not MISSING:
            out[f.name] = f.default
        elif f.default_factory is not MISSING:
            out[f.name] = f.default_factory()
    return out
