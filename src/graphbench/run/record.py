"""The run record: what every run writes to ``results.json`` and what ``graphbench.report`` reads.

One typed record, one schema version, strict JSON (non-finite numbers are written as ``null``, never
as the ``NaN`` token that JSON does not have), written atomically so a reader never sees half a file.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphbench.run.provenance import Provenance

RESULTS_FILENAME: str = "results.json"
#: bump when a field changes meaning; readers accept older versions field by field (3: ``provenance``)
SCHEMA_VERSION: int = 3

COMPLETED: str = "completed"
RUNNING: str = "running"
INTERRUPTED: str = "interrupted"
PREEMPTED: str = "preempted"
FAILED_PREFIX: str = "failed: "
DIVERGED_PREFIX: str = "diverged at epoch "
#: a trial of an Optuna search that its pruner stopped (graphbench.callbacks.optuna_pruning)
PRUNED_PREFIX: str = "pruned at epoch "


def failed(message: str) -> str:
    """``failed: <message>`` on one line."""
    return FAILED_PREFIX + " ".join(str(message).split())


def diverged(epoch: int) -> str:
    return f"{DIVERGED_PREFIX}{epoch}"


def pruned(epoch: int) -> str:
    return f"{PRUNED_PREFIX}{epoch}"


def is_pruned(status: str) -> bool:
    """Whether ``status`` is ``pruned at epoch N``: the search stopped the trial, the run itself went right."""
    return status.startswith(PRUNED_PREFIX)


def exit_code(status: str) -> int:
    """The process exit code of a run that ended with ``status``: 0 for ``completed`` and for
    ``pruned at epoch N`` (the search's decision, not an error); 130 for Ctrl-C and 143 for SIGTERM
    (128 + signal number, as a shell reports them); 1 for failed or diverged runs."""
    if status == COMPLETED or is_pruned(status):
        return 0
    if status == INTERRUPTED:
        return 130
    if status == PREEMPTED:
        return 143
    return 1


def finite_or_none(value: Any) -> Any:
    """``value`` with every non-finite float (NaN, ±inf), at any depth, replaced by ``None``."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    return value


def flat_config(config: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"model.hidden_dim": 64, ...}``: the config's leaves under dotted keys (lists stay whole).

    What W&B gets as the run config: a W&B sweep locks the keys it sets (``model`` for
    ``model=gcn``), so nested values under them would be dropped; dotted keys never collide."""
    flat: dict[str, Any] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(flat_config(value, f"{name}."))
        else:
            flat[name] = value
    return flat


@dataclass
class RunRecord:
    """The content of one run's ``results.json``.

    ``metrics`` holds ``train/<m>``, ``val/<m>`` (at the best validation epoch, the one the
    checkpoint callback kept) and ``test/<m>`` (evaluated with that checkpoint); a metric that was not
    finite is ``None``. ``tested_epoch`` is the epoch those metrics come from: ``best_epoch``, or the
    last epoch under ``task.checkpoint=last`` (``best_epoch`` is then still the best validation epoch).
    ``replicate_keys`` are the dotted config keys whose value follows from the seed (the seed itself,
    run names interpolating it): the report ignores them when it groups runs. ``score`` is the
    ``metrics`` key the report tabulates for the run: ``None`` means ``test/<metric>`` (training and
    evaluation); an analysis task names its own (``memorization/rate``, ``mia_auc``).

    Every ending fills what is known by then: a run that stopped early (interrupted, preempted,
    diverged, failed) still has ``epochs_trained``, ``best_epoch`` and the train/val metrics of the
    best epoch so far, and ``history`` (one ``{epoch, lr, train/*, val/*}`` entry per finished
    epoch); ``test/<m>`` only where the test ran.

    ``provenance`` (schema version 3) says what made the run: code, packages, machine, raw files,
    overrides, start and end (:class:`graphbench.run.provenance.Provenance`); ``None`` in older records.
    """

    status: str
    config: dict[str, Any] | None
    schema_version: int = SCHEMA_VERSION
    run_dir: str | None = None
    replicate_keys: list[str] = field(default_factory=list)
    num_params: int | None = None
    hidden_dim: int | None = None
    monitor: str | None = None
    metric: str | None = None
    higher_is_better: bool | None = None
    score: str | None = None
    best_epoch: int | None = None
    tested_epoch: int | None = None
    epochs_trained: int | None = None
    metrics: dict[str, float | None] = field(default_factory=dict)
    history: list[dict[str, float | None]] = field(default_factory=list)
    time_per_epoch_s: float | None = None
    total_time_s: float | None = None
    peak_memory_mb: float | None = None
    provenance: Provenance | None = None

    @property
    def completed(self) -> bool:
        return self.status == COMPLETED

    def to_dict(self) -> dict[str, Any]:
        return finite_or_none(dataclasses.asdict(self))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, default=str, allow_nan=False)

    def write(self, path: Path, exclusive: bool = False) -> None:
        """Write atomically: a temporary file beside ``path``, then a rename. With ``exclusive``, the
        temporary file is hard-linked to ``path`` instead, which fails with ``FileExistsError`` when
        ``path`` exists: of two runs claiming one directory at once, exactly one wins."""
        path = Path(path)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(self.to_json())
        if not exclusive:
            tmp.replace(path)
            return
        try:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise
            except OSError:  # a file system without hard links: claim the name empty, then fill it
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                tmp.replace(path)
        finally:
            tmp.unlink(missing_ok=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunRecord:
        """Read a record of any schema version; unknown keys are ignored, missing ones take defaults.
        Raises ``ValueError`` when ``data`` is not a record (no ``status`` or no ``config`` object)."""
        if not isinstance(data, dict):
            raise ValueError(f"{RESULTS_FILENAME} is not a JSON object")
        if "status" not in data:
            raise ValueError(f"{RESULTS_FILENAME} has no 'status'")
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["status"] = str(values["status"])
        if not isinstance(values.get("config"), dict):
            values["config"] = None  # a reader tells "no config" apart from an empty one
        values.setdefault("schema_version", 1)
        values["provenance"] = Provenance.from_dict(values.get("provenance"))
        return cls(**values)

    @classmethod
    def read(cls, path: Path) -> RunRecord:
        return cls.from_dict(json.loads(Path(path).read_text()))
