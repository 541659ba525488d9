"""The command line's plumbing: the summary a finished run prints, ``--version``, and library logging in the app's format."""

from __future__ import annotations

import logging
import os
import re
import sys
import warnings
from collections.abc import Sequence
from importlib import metadata

from graphbench.run.provenance import DISTRIBUTION, installed_version
from graphbench.run.record import FAILED_PREFIX, INTERRUPTED, PREEMPTED, RunRecord
from graphbench.vocabulary.splits import SPLITS


def program_name(module: str, script: str, argv0: str | None = None) -> str:
    """The command a usage line names: ``script`` (``graphbench-report``) when the process is that console
    script (``argv0``: ``sys.argv[0]``), else ``python -m <module>``."""
    name = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    return script if name == script else f"python -m {module}"


def version_text(distribution: str, version: str | None, package_dir: str, others: Sequence[tuple[str, str | None]] = ()) -> str:
    """What ``graphbench --version`` prints: the distribution, its version and where the module ``graphbench`` is
    imported from (``version`` ``None``: no distribution installs it, e.g. a checkout on ``PYTHONPATH``); then a
    warning for each other installed distribution (name, version) that also provides a module ``graphbench``."""
    if version is None:
        lines = [f"graphbench from {package_dir} ({distribution} is not installed: a checkout on the module path)"]
    else:
        lines = [f"{distribution} {version}: graphbench from {package_dir}"]
    for name, other_version in others:
        lines.append(
            f"warning: {name} {other_version} is installed too and also provides a module named graphbench, so one "
            f"overwrites the other's files; keep one per environment (pip uninstall {name})"
        )
    return "\n".join(lines)


def canonical_name(distribution: str) -> str:
    """A distribution's name as the package index compares names (PEP 503): ``Graphbench_GNN`` is ``graphbench-gnn``."""
    return re.sub(r"[-_.]+", "-", distribution).lower()


def installed_version_text(package_dir: str) -> str:
    """:func:`version_text` of this environment: :data:`~graphbench.run.provenance.DISTRIBUTION`'s version and the
    other distributions whose top-level modules include ``graphbench`` (``importlib.metadata``)."""
    owners = metadata.packages_distributions().get("graphbench", [])
    others = sorted({name for name in owners if canonical_name(name) != canonical_name(DISTRIBUTION)})
    return version_text(
        DISTRIBUTION, installed_version(DISTRIBUTION), package_dir, [(name, installed_version(name)) for name in others]
    )


def format_summary(record: RunRecord) -> str:
    """A short human-readable summary of a run: its status, numbers when it completed, its directory."""
    lines = [f"status: {record.status}"]
    if record.completed:
        if record.num_params is not None:
            lines.append(f"parameters: {record.num_params:,} (hidden_dim={record.hidden_dim})")
        if record.best_epoch is not None:  # analysis tasks (task=mia) train many models and have no one best epoch
            lines.append(f"best epoch: {record.best_epoch} of {record.epochs_trained}")
        others = [k for k in sorted(record.metrics) if not k.startswith(tuple(f"{split}/" for split in SPLITS))]
        if others:
            lines.append(
                "metrics: "
                + ", ".join(f"{k} = {record.metrics[k]:.4f}" if record.metrics[k] is not None else f"{k} = n/a" for k in others)
            )
        for split in SPLITS:
            values = ", ".join(
                f"{k} = {v:.4f}" if v is not None else f"{k} = n/a"
                for k, v in sorted(record.metrics.items())
                if k.startswith(f"{split}/")
            )
            if values:  # a task without this split's metrics (task=memorization has no train/) prints no empty line
                lines.append(f"{split}: {values}")
        if record.time_per_epoch_s is not None and record.peak_memory_mb is not None:
            lines.append(f"time per epoch: {record.time_per_epoch_s:.2f} s, peak memory: {record.peak_memory_mb:.0f} MiB")
    lines.append(f"run directory: {record.run_dir}")
    return "\n".join(lines)


def end_line(record: RunRecord, rerun: str | None = None) -> str:
    """The line (for stderr) a run that did not complete ends with: ``error: <why> (run directory: D)`` for a
    failed or diverged run; for a run stopped by Ctrl-C or SIGTERM, what stopped it and, given ``rerun`` (the
    overrides that point a new run at its directory, ``hydra.run.dir=D``), the command that continues it."""
    where = f"run directory: {record.run_dir}"
    stopped = {INTERRUPTED: "interrupted (Ctrl-C)", PREEMPTED: "preempted (SIGTERM)"}.get(record.status)
    if stopped is not None:
        if rerun is None:
            return f"{stopped}; {where}"
        return f"{stopped}; {where}; to continue it, run the same command with resume=auto {rerun}"
    reason = record.status.removeprefix(FAILED_PREFIX)
    return f"error: {reason} ({where})"


#: warnings Lightning raises about its own internals or about step-level logging, which graphbench
#: does not use (it logs once per epoch); (message regex, module regex) for ``warnings.filterwarnings``
IGNORED_WARNINGS: tuple[tuple[str, str], ...] = (
    (r".*isinstance\(treespec, LeafSpec\)` is deprecated.*", r"lightning\.pytorch\.utilities\._pytree"),
    (r"The number of training batches .* is smaller than the logging interval.*", r"lightning\.pytorch\..*"),
    # a resumed run reuses its directories on purpose (ResumableCSVLogger keeps the rows it resumes)
    (r"Experiment logs directory .* exists and is not empty.*", r"lightning\.fabric\..*"),
    (r"Checkpoint directory .* exists and is not empty.*", r"lightning\.pytorch\..*"),
    # epoch values are computed by torchmetrics, whose compute() already syncs them across DDP ranks
    (r"It is recommended to use `self\.log\(.*sync_dist=True\)` when logging on epoch level.*", r"lightning\.pytorch\..*"),
)


def quiet_library_logging() -> None:
    """Each message once, in the app's format: Lightning's loggers print through handlers of their
    own as well as through the ones Hydra installs; keep only the latter. Lightning's advertisement
    for its cloud logger and the warnings in :data:`IGNORED_WARNINGS` are dropped."""
    import lightning.pytorch  # noqa: F401 - importing it installs the handlers removed here

    for name in ("lightning", "lightning.pytorch", "lightning.fabric"):
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.propagate = True
    for message, module in IGNORED_WARNINGS:
        warnings.filterwarnings("ignore", message=message, module=module)

    class _NoAdverts(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            return "litlogger" not in record.getMessage()

    for name in ("lightning.pytorch.utilities.rank_zero", "lightning.pytorch"):
        logging.getLogger(name).addFilter(_NoAdverts())
