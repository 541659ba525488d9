"""graphbench's OmegaConf resolvers, registered when :mod:`graphbench` is imported (run.py, the report,
the analysis CLI and the tests import it before they compose a config).

``${gb.first_existing_dir:a,b,...}``: the first of the given directories that exists, else the first
one. ``conf/paths/default.yaml`` builds the raw-data root from it::

    data_dir: ${oc.env:GRAPHBENCH_DATA,${gb.first_existing_dir:./data,../shared/data}}

so ``paths.data_dir`` is ``$GRAPHBENCH_DATA`` if set, else ``./data`` if it exists, else
``../shared/data`` (the read-only data folder beside a checkout) if it exists, else ``./data`` (which
the missing-files message then names). Relative paths are taken from the working directory at
resolution time (Hydra does not change it: ``hydra.job.chdir=false``) and returned as given.

``${gb.metric_mode:${dataset.higher_is_better}}``: ``max`` or ``min``, the ``mode`` of the callbacks
that watch the dataset's validation metric (``conf/callbacks/``).

``${gb.run_suffix:}``: a short random name part (6 hex digits), drawn once per config like Hydra's
``${now:...}`` (cached; Hydra copies the cache into a sweep's job configs, also to submitit's job
processes). ``conf/hydra/default.yaml`` ends run and sweep directory names with it, after the time
to the microsecond, so two runs started at the same moment (a shell loop, a job array) never share a
directory: ``outputs/2025-01-31/14-05-09-123456_3fa9c2``.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from omegaconf import OmegaConf

FIRST_EXISTING_DIR = "gb.first_existing_dir"
RUN_SUFFIX = "gb.run_suffix"
METRIC_MODE = "gb.metric_mode"


def first_existing_dir(*candidates: str) -> str:
    """The first candidate that is an existing directory, else the first candidate."""
    if not candidates:
        raise ValueError(f"${{{FIRST_EXISTING_DIR}:...}} needs at least one directory")
    for candidate in candidates:
        if Path(str(candidate)).expanduser().is_dir():
            return str(candidate)
    return str(candidates[0])


def run_suffix() -> str:
    """Six random hex digits: ``16**6`` (about 17 million) names per microsecond."""
    return secrets.token_hex(3)


def metric_mode(higher_is_better: bool) -> str:
    """``max`` for a metric where higher is better, else ``min``: Lightning's ``mode`` of the callbacks
    that watch it."""
    if not isinstance(higher_is_better, bool):
        raise ValueError(f"${{{METRIC_MODE}:...}} takes true or false (dataset.higher_is_better), got {higher_is_better!r}")
    return "max" if higher_is_better else "min"


def register_resolvers() -> None:
    """Register graphbench's resolvers once per process (importing graphbench calls this)."""
    if not OmegaConf.has_resolver(FIRST_EXISTING_DIR):
        # not cached: a run resolves it again in its own working directory and environment
        OmegaConf.register_new_resolver(FIRST_EXISTING_DIR, first_existing_dir, use_cache=False)
    if not OmegaConf.has_resolver(RUN_SUFFIX):
        # cached, as Hydra's ${now:...}: one config names one directory however often it is resolved
        OmegaConf.register_new_resolver(RUN_SUFFIX, run_suffix, use_cache=True)
    if not OmegaConf.has_resolver(METRIC_MODE):
        OmegaConf.register_new_resolver(METRIC_MODE, metric_mode)
