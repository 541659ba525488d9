"""Command line: ``python -m graphbench.sweep wandb [--method M] [--name N] [--output FILE] OVERRIDE...``.

Writes a W&B sweep configuration (YAML, to stdout or ``--output``) for ``wandb sweep``; its runs are
``python run.py <key=value ...>``. Run it from the repository root, where ``wandb agent`` will run too::

    python -m graphbench.sweep wandb dataset=zinc model=gcn,gine 'optimizer.lr=tag(log, interval(1e-4, 1e-2))' -o sweep.yaml
    python -m graphbench.sweep wandb hparams_search=cycles_optuna --method bayes -o sweep.yaml

OVERRIDE is a Hydra override (``key=value``, ``key=a,b,c``, ``choice``, ``range``, ``interval``,
``tag(log, interval(...))``) or ``hparams_search=NAME`` / ``conf/hparams_search/NAME.yaml``, whose
``hydra.sweeper.params`` are swept (overrides given here take precedence). The metric is the dataset's
monitored validation metric and its direction. Every run logs to W&B (``logger=wandb``) and writes its
Hydra run directory under ``multirun/wandb/<sweep id>/<run id>`` (``python -m graphbench.report
multirun/wandb/<sweep id>`` tabulates the sweep). The YAML is checked with W&B's own validator first.

Exit status: 0 when the sweep was written; 2 for a bad argument (one line on stderr says what to fix).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from graphbench.conf import CONFIG_DIR
from graphbench.run.cli import program_name
from graphbench.sweep.compose import (
    HPARAMS_SEARCH,
    compose_job,
    config_groups,
    dataset_metric,
    hparams_search_overrides,
    hydra_conf,
    job_config,
    run_variants,
)
from graphbench.sweep.wandb import METHODS, SweepError, parameters_from_overrides, sweep_config, to_yaml, validate

#: each run's Hydra run directory: one folder per sweep, one per run (agents on one machine never share one)
RUN_DIR: str = "'multirun/wandb/${oc.env:WANDB_SWEEP_ID,none}/${oc.env:WANDB_RUN_ID,${now:%Y-%m-%d_%H-%M-%S}}'"


def hparams_search_name(arg: str, config_dir: Path) -> str | None:
    """``hparams_search=NAME`` or the path of ``<config_dir>/hparams_search/NAME.yaml`` -> ``NAME``; else None."""
    if arg.startswith(f"{HPARAMS_SEARCH}="):
        return arg.split("=", 1)[1]
    if "=" in arg or not arg.endswith((".yaml", ".yml")):
        return None
    path, root = Path(arg).resolve(), (config_dir / HPARAMS_SEARCH).resolve()
    if not path.is_file():
        raise SweepError(f"{arg}: no such file")
    if not path.is_relative_to(root):
        raise SweepError(f"{arg} is not in {root}: a search file is an option of the {HPARAMS_SEARCH} group")
    return path.relative_to(root).with_suffix("").as_posix()


def wandb_sweep(args: Sequence[str], *, config_dir: Path, method: str | None = None, name: str | None = None) -> dict[str, Any]:
    """The validated W&B sweep configuration for ``args`` (overrides and at most one hparams_search)."""
    searches = [s for s in (hparams_search_name(a, config_dir) for a in args) if s is not None]
    overrides = [a for a in args if hparams_search_name(a, config_dir) is None]
    if len(searches) > 1:
        raise SweepError(f"give one {HPARAMS_SEARCH}, not {searches}")
    search = searches[0] if searches else None
    with hydra_conf(config_dir):
        groups = config_groups()
        parameters = parameters_from_overrides([*(hparams_search_overrides(search) if search else []), *overrides], groups)
        if parameters.setdefault("logger", {"value": "wandb"}) != {"value": "wandb"}:
            raise SweepError("the runs of a W&B sweep must log to W&B: leave logger out (the sweep sets logger=wandb)")
        variants = run_variants(parameters, groups)
        runs = [compose_job(a) for a in variants]
        if search is not None:  # a search file that sets more than its search space must reach every run
            with_search = compose_job([*variants[0], f"{HPARAMS_SEARCH}={search}"])
            if job_config(with_search) != job_config(runs[0]):
                parameters[HPARAMS_SEARCH] = {"value": search}
                runs = [compose_job(a) for a in run_variants(parameters, groups)]
        parameters.setdefault("hydra.run.dir", {"value": RUN_DIR})  # where a run writes: no bearing on what it runs
        metrics = {dataset_metric(cfg.dataset) for cfg in runs}
        if len(metrics) > 1:
            raise SweepError(f"the swept datasets optimize different metrics {sorted(metrics)}: run one sweep per dataset")
        ((monitor, maximize),) = metrics
        project = OmegaConf.select(runs[0], "logger.wandb.project", default=None)
    sweep = sweep_config(parameters, metric=monitor, maximize=maximize, method=method, name=name, project=project)
    validate(sweep)
    return sweep


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name("graphbench.sweep", "graphbench-sweep"), description="Sweeps run by other tools than Hydra's sweepers."
    )
    tools = parser.add_subparsers(dest="tool", required=True, metavar="TOOL")
    wandb = tools.add_parser(
        "wandb",
        help="write a W&B sweep configuration (YAML) whose runs are run.py jobs",
        description="Write a W&B sweep configuration whose runs are `python run.py key=value ...`, validated offline. "
        "Then: wandb sweep FILE; wandb agent ENTITY/PROJECT/SWEEP_ID (both from the repository root).",
    )
    wandb.add_argument(
        "overrides",
        nargs="+",
        metavar="OVERRIDE",
        help="Hydra overrides: key=value, key=a,b,c, key=choice(a,b,c), key=range(start,stop[,step]), key=interval(low,high), "
        "key=tag(log, interval(low,high)); or hparams_search=NAME / conf/hparams_search/NAME.yaml",
    )
    wandb.add_argument(
        "--method", choices=METHODS, help="search method (default: grid if every parameter is discrete, else random)"
    )
    wandb.add_argument("--name", help="the sweep's name in W&B")
    wandb.add_argument("--output", "-o", type=Path, help="write the YAML here instead of stdout")
    wandb.add_argument(
        "--config-dir",
        type=Path,
        default=CONFIG_DIR,
        help="graphbench's conf/ directory (default: the one installed with graphbench)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        sweep = wandb_sweep(args.overrides, config_dir=args.config_dir, method=args.method, name=args.name)
    except SweepError as exc:
        parser.exit(2, f"error: {exc}\n")
    text = to_yaml(sweep)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    print(
        f"wrote {args.output}; next: wandb sweep {args.output}, then wandb agent <entity>/{sweep.get('project', '<project>')}/<sweep id>",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
