"""Command line: ``python -m graphbench.analysis homophily dataset=<name>[,<name>...] [overrides...] [--csv]``
and ``python -m graphbench.analysis memorization <multirun dir>... [--plot out.png] [--csv]`` (the runs
of ``task=memorization``: :func:`memorization_main`), and ``python -m graphbench.analysis igb-ranks
--public DIR... --iid DIR...`` (IGB rank stability on two protocols: :mod:`graphbench.analysis.igb.ranks`).

Composes ``conf/config.yaml`` with the Hydra overrides once per dataset named in ``dataset=`` (several
names separated by commas; the other overrides apply to each, e.g. ``dataset.split=random
paths.data_dir=/data``), builds the dataset's DataModule as ``run.py`` would, and prints one row of
:func:`graphbench.analysis.homophily.homophily_measures` per dataset: a markdown table, or CSV with
``--csv``. The config directory is ``--config-dir``, else the configs installed with the package
(``graphbench.conf``: the checkout's ``conf/`` in an editable install). Exit status: 0 on success, 1 when a dataset
cannot be loaded or has no node labels (the message names it), 2 for a bad argument.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from hydra import compose, initialize_config_dir
from hydra.errors import HydraException
from omegaconf import DictConfig
from torch_geometric.data import Data

from graphbench.analysis.homophily import homophily_measures, homophily_table
from graphbench.conf import CONFIG_DIR
from graphbench.run.cli import program_name
from graphbench.vocabulary.errors import ConfigError, GraphbenchError

if TYPE_CHECKING:  # the training stack is heavy and not needed to parse arguments
    from graphbench.data.datamodules.base import DataModule

ANALYSES: tuple[str, ...] = ("homophily", "memorization", "igb-ranks")


def find_config_dir(explicit: Path | None = None) -> Path:
    """``explicit`` if given, else the configs installed with the package (:data:`graphbench.conf.CONFIG_DIR`);
    it must hold ``config.yaml``."""
    candidate = CONFIG_DIR if explicit is None else explicit
    if not (candidate / "config.yaml").is_file():
        raise ConfigError(f"no config.yaml in {candidate}; pass --config-dir <graphbench's conf/ directory>, or omit it")
    return candidate.resolve()


def compose_config(config_dir: Path, overrides: Sequence[str]) -> DictConfig:
    """``conf/config.yaml`` composed with ``overrides``, as ``run.py`` composes it (Hydra's global state
    is initialised for the call and released after it)."""
    with initialize_config_dir(config_dir=str(config_dir), version_base="1.3"):
        return compose("config", overrides=list(overrides))


def graph_of(datamodule: DataModule) -> Data:
    """The node-labelled graph of a set-up node-level DataModule: its one graph (transductive datasets),
    else the disjoint union of every batch of its train, val and test loaders (inductive datasets,
    e.g. PATTERN, where each graph is in exactly one split). The one place that knows the DataModule's
    internals."""
    if datamodule.graph is not None:
        return datamodule.graph
    loaders = (datamodule.train_dataloader(), datamodule.val_dataloader(), datamodule.test_dataloader())
    edges, labels, offset = [], [], 0
    for batch in (batch for loader in loaders for batch in loader):
        edges.append(batch.edge_index + offset)
        labels.append(batch.y)
        offset += batch.num_nodes
    return Data(edge_index=torch.cat(edges, dim=1), y=torch.cat(labels), num_nodes=offset)


def load_graph(cfg: DictConfig) -> tuple[Data, Any]:
    """The graph of ``cfg.dataset`` (via :func:`graph_of`) and the dataset's ``DatasetInfo``."""
    from graphbench.build.data import (
        build_datamodule,  # imported here: the training stack is heavy and not needed to parse arguments
    )

    datamodule = build_datamodule(cfg)
    datamodule.prepare_data()
    datamodule.setup("fit")
    info = datamodule.info
    if info.level != "node" or info.task_type not in ("multiclass", "binary"):
        raise ConfigError(
            f"dataset={cfg.dataset.name} is a {info.level}-level {info.task_type} task; homophily needs one class per node "
            "(a node-level multiclass or binary dataset)"
        )
    return graph_of(datamodule), info


def homophily_rows(
    datasets: Sequence[str],
    overrides: Sequence[str],
    config_dir: Path,
    load: Callable[[DictConfig], tuple[Data, Any]] = load_graph,
) -> list[dict[str, object]]:
    """One row ``{"dataset": name, **homophily_measures(...)}`` per dataset name."""
    rows: list[dict[str, object]] = []
    for name in datasets:
        graph, info = load(compose_config(config_dir, [f"dataset={name}", *overrides]))
        num_classes = info.num_outputs if info.task_type == "multiclass" else None
        rows.append({"dataset": name, **homophily_measures(graph.edge_index, graph.y, int(graph.num_nodes), num_classes)})
    return rows


def split_datasets(overrides: Sequence[str]) -> tuple[list[str], list[str]]:
    """The names in the one ``dataset=a,b`` override, and the other overrides."""
    named = [o for o in overrides if o.startswith("dataset=")]
    if len(named) != 1:
        raise ConfigError("name the dataset(s) once: dataset=<name>[,<name>...], e.g. dataset=cora,citeseer")
    names = [n.strip() for n in named[0].removeprefix("dataset=").split(",") if n.strip()]
    if not names:
        raise ConfigError("dataset= names no dataset; e.g. dataset=cora,citeseer")
    return names, [o for o in overrides if not o.startswith("dataset=")]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m graphbench.analysis``."""
    parser = argparse.ArgumentParser(
        prog=program_name("graphbench.analysis", "graphbench-analysis"),
        description="Analyses of the datasets and runs of graphbench. homophily: edge, node, class-insensitive and "
        "adjusted homophily and label informativeness on the undirected graph without self-loops, one row per dataset "
        "(its overrides name dataset=<name>[,<name>...]). memorization: the memorization rates of task=memorization runs "
        "(its arguments are run or multirun directories). igb-ranks: IGB's rank stability of a model set "
        "(--public DIR --iid DIR; igb-ranks --help).",
    )
    parser.add_argument("analysis", choices=ANALYSES)
    parser.add_argument(
        "overrides",
        nargs="*",
        metavar="ARG",
        help="homophily: Hydra overrides, dataset=<name>[,<name>...] required; memorization: run or multirun directories",
    )
    parser.add_argument("--csv", action="store_true", help="print CSV (full precision) instead of a markdown table")
    parser.add_argument(
        "--plot", type=Path, default=None, help="memorization: save the rate-vs-homophily plot of the runs as this PNG"
    )
    parser.add_argument(
        "--config-dir", type=Path, default=None, help="the conf/ directory (default: the one installed with graphbench)"
    )
    return parser


def main(argv: Sequence[str] | None = None, load: Callable[[DictConfig], tuple[Data, Any]] = load_graph) -> int:
    """Run the CLI; return the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["igb-ranks"]:  # its own arguments: graphbench.analysis.igb.ranks
        from graphbench.analysis.igb.ranks import main as igb_ranks_main

        return igb_ranks_main(arguments[1:])
    parser = build_parser()
    args = parser.parse_args(arguments)
    if args.analysis == "memorization":
        return memorization_main(parser, args.overrides, args.plot, args.csv)
    try:
        datasets, overrides = split_datasets(args.overrides)
        config_dir = find_config_dir(args.config_dir)
    except ConfigError as exc:
        parser.error(str(exc))
    try:
        rows = homophily_rows(datasets, overrides, config_dir, load)
    except HydraException as exc:
        parser.error(str(exc))
    except GraphbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(homophily_table(rows, csv_format=args.csv))
    return 0


def memorization_main(parser: argparse.ArgumentParser, directories: Sequence[str], plot: Path | None, csv_format: bool) -> int:
    """``python -m graphbench.analysis memorization <multirun dir>... [--plot out.png] [--csv]``: one row
    per completed ``task=memorization`` run found under the directories, and the plot of memorization
    rate against ``dataset.homophily``. Exit status 1 when no such run is found."""
    from graphbench.analysis.memorization_plots import collect_runs, plot_rate_vs_homophily, runs_table

    if not directories:
        parser.error("memorization needs the directory of a multirun (or of runs), e.g. multirun/2026-01-01/12-00-00")
    missing = [d for d in directories if not Path(d).is_dir()]
    if missing:
        parser.error(f"not a directory: {', '.join(missing)}")
    runs = [run for d in directories for run in collect_runs(Path(d))]
    if not runs:
        print(f"error: no completed task=memorization run under {', '.join(directories)}", file=sys.stderr)
        return 1
    sys.stdout.write(runs_table(runs, csv_format=csv_format))
    if plot is not None:
        try:
            plot_rate_vs_homophily(runs, plot)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(f"plot: {plot}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
