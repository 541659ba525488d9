"""graphbench's command line: compose the config shipped as ``graphbench.conf``, then run its task.

    graphbench                                               # the default experiment (python run.py in a checkout)
    graphbench -m dataset=peptides-func model=gcn head=mlp2 seed=0,1,2,3
    graphbench --help                                        # groups and their options
    graphbench --config-dir ~/my-conf dataset=my-data        # add a folder of your own configs (its groups:
                                                             # dataset/, experiment/, recipe/, ...) to the search path

The configs are the package ``graphbench.conf`` (Hydra's ``pkg://`` search path): ``conf/`` of the
checkout in an editable install, the copy inside the wheel otherwise (``conf/__init__.py``). Paths in
them are relative to the working directory: raw data under ``./data`` (or ``../shared/data`` beside a
checkout, or ``$GRAPHBENCH_DATA``), caches under ``./cache``, runs under ``outputs/`` and ``multirun/``.

Exit code: 0 when the run completed (or, as a trial of an Optuna search, was pruned); 1 when it failed or diverged; 130 after Ctrl-C; 143 after
SIGTERM. A multirun goes on after a job that failed and ends by listing the jobs that did not
complete (exit code 1, see graphbench.run.hydra_callbacks).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path

import hydra
from hydra import compose, initialize_config_module
from hydra.core.hydra_config import HydraConfig
from hydra.core.plugins import Plugins
from hydra.types import RunMode
from omegaconf import DictConfig, open_dict

from graphbench.build.task import build_task
from graphbench.run import config_errors
from graphbench.run.cli import end_line, format_summary, installed_version_text, quiet_library_logging
from graphbench.run.distributed import is_rank_zero
from graphbench.run.frame import completed_record
from graphbench.run.naming import run_group_from_overrides
from graphbench.run.processes import share_tensors_through_files
from graphbench.run.recipe import card_line, experiment_exists, hydra_compose, shown_config_argv, with_recipe
from graphbench.run.record import INTERRUPTED, PREEMPTED, RESULTS_FILENAME, RunRecord, exit_code, is_pruned
from graphbench.run.run_dir import default_resume
from graphbench.vocabulary.errors import GraphbenchError
from hydra_plugins.graphbench_optuna_sweeper.optuna_sweeper import OptunaSweeper

log = logging.getLogger(__name__)

#: the package whose files are the configs (conf/ at the repository root, mapped in pyproject.toml)
CONFIG_MODULE: str = "graphbench.conf"

config_errors.install()  # a mistyped group, option or key: one line with the closest names
# hydra/sweeper=optuna: Hydra finds plugins by scanning the hydra_plugins namespace package, which misses the
# modules of an editable install (setuptools' import hook); Hydra's public register() adds the class either way
Plugins.instance().register(OptunaSweeper)


def run_task(cfg: DictConfig, overrides: Sequence[str] = ()) -> RunRecord:
    """Run ``cfg.task``; ``overrides`` (Hydra's task overrides) go into the run's provenance."""
    share_tensors_through_files()  # before any DataLoader forks its workers
    return build_task(cfg)(cfg, overrides=list(overrides))


def main() -> float | None:
    """The ``graphbench`` command (and ``python run.py``): ``--version`` alone prints the distribution, its version
    and where the module is imported from (:func:`graphbench.run.cli.installed_version_text`); any other command
    line is the Hydra app :func:`hydra_main`."""
    if sys.argv[1:] == ["--version"]:
        print(installed_version_text(str(Path(__file__).resolve().parent)), flush=True)
        return None
    if any(arg in ("--cfg", "-c") or arg.startswith("--cfg=") for arg in sys.argv[1:]):  # show what a run trains
        with initialize_config_module(config_module=CONFIG_MODULE, version_base="1.3"):
            sys.argv = [sys.argv[0], *shown_config_argv(sys.argv[1:], lambda overrides: compose("config", list(overrides)))]
    return hydra_main()


@hydra.main(version_base="1.3", config_path=f"pkg://{CONFIG_MODULE}", config_name="config")
def hydra_main(cfg: DictConfig) -> float | None:
    """Run the composed config's task; return its monitored metric (what a Hydra sweeper such as Optuna optimizes)."""
    quiet_library_logging()
    overrides = list(HydraConfig.get().overrides.task)  # recorded in results.json's provenance
    # the dataset's published setting for the model, and the command line's deviations on its card
    chosen = HydraConfig.get().runtime.choices.get("experiment") is not None
    cfg = with_recipe(cfg, overrides, hydra_compose, chosen, experiment_exists)
    launcher = str(HydraConfig.get().launcher.get("_target_", ""))
    if cfg.get("resume") is None:  # job arrays are requeued: there, a run resumes by default
        with open_dict(cfg):
            cfg.resume = default_resume(launcher)
    # a completed run that resume=auto skips leaves its log (run.log) as it was
    skipped = cfg.resume == "auto" and completed_record(Path(cfg.paths.output_dir) / RESULTS_FILENAME) is not None
    if is_rank_zero() and not skipped and (line := card_line(cfg)) is not None:
        log.info("%s", line)
    if cfg.get("run_group") is None:  # the W&B group: this job's overrides minus the seed (graphbench.run.naming)
        with open_dict(cfg):
            cfg.run_group = run_group_from_overrides(overrides)
    submitit = "submitit" in launcher
    multirun = HydraConfig.get().mode == RunMode.MULTIRUN
    try:
        record = run_task(cfg, overrides)
    except GraphbenchError as exc:  # raised only before the run claims its directory (nothing written there)
        print(f"error: {exc}", file=sys.stderr, flush=True)
        if multirun:
            return None
        raise SystemExit(1) from None
    if not is_rank_zero():  # a DDP rank started by a scheduler: rank 0 reports the run
        return None
    if is_pruned(record.status):  # a trial its search's pruner stopped: tested and recorded, no error
        print(f"{record.status} (run directory: {record.run_dir})", flush=True)
        return None
    if not record.completed:
        rerun = f"hydra.sweep.dir={HydraConfig.get().sweep.dir}" if multirun else f"hydra.run.dir={record.run_dir}"
        print(end_line(record, rerun), file=sys.stderr, flush=True)
        # a single run exits with its status's code; in a sweep run in this process, Ctrl-C or SIGTERM
        # stops the whole sweep; a job of a submitit array ends normally with its status recorded (the
        # launcher would otherwise abort the sweep), and SLURM requeues it through submitit's handler
        stop_sweep = record.status in (INTERRUPTED, PREEMPTED) and not submitit
        if not multirun or stop_sweep:
            raise SystemExit(exit_code(record.status))
        return None
    print(format_summary(record), flush=True)
    value = record.metrics.get(record.monitor or "")
    return float(value) if value is not None else None  # what a Hydra sweeper (Optuna) optimizes
