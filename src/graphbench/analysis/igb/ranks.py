r"""Rank stability on two protocols side by side (IGB, Li et al., IJCAI 2022, Section 4):
``python -m graphbench.analysis igb-ranks --public DIR [DIR ...] --iid DIR [DIR ...] [--csv]``.

``--public`` names Hydra (multi)run directories of ``task=train`` runs on a fixed split (e.g. Cora's
public split), ``--iid`` directories of ``task=iid_eval`` runs of the same models and seeds. For
each dataset found under both, the report's grouping (:func:`graphbench.report.collect.collect`) and
rank stability (:func:`graphbench.report.stats.rank_stability`) are computed for each protocol, and
printed beside each model's mean ± std test accuracy: IGB's inversion number (the paper's: the
inversions of every other seed's ranking of the models against the reference seed's, summed) and the
all-pairs inversion number (mean and maximum over all pairs of seeds). A smaller inversion number
means the protocol ranks the models more consistently across seeds.

Exit status: 0 on success, 1 when no dataset has completed runs under both, 2 for a bad argument.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from graphbench.report.collect import Group, ReportInputError, collect
from graphbench.report.stats import BlockSummary, summarize_block
from graphbench.run.cli import program_name

PROTOCOLS: tuple[str, ...] = ("public", "iid")


def summaries(dirs: Sequence[Path]) -> dict[str, BlockSummary]:
    """``{dataset: summary}`` of the completed runs under ``dirs``, one block per dataset."""
    return {block.dataset: summarize_block(block) for block in collect(dirs).blocks}


def model_of(group: Group) -> str:
    """The group's ``model.name`` (the label when the runs have none)."""
    model = (group.runs[0].config or {}).get("model")
    name = model.get("name") if isinstance(model, dict) else None
    return str(name) if name is not None else group.label


def _cell(mean: float, std: float) -> str:
    if not math.isfinite(mean):
        return "n/a"
    return f"{100 * mean:.1f} ± {100 * std:.1f}" if math.isfinite(std) else f"{100 * mean:.1f}"


def _inversions(summary: BlockSummary) -> str:
    """The all-pairs inversion number: mean / max over seed pairs."""
    rank = summary.rank
    if rank.reason:
        return f"n/a ({rank.reason})"
    return f"{rank.mean_inversions:.2f} / {rank.max_inversions} (of {rank.max_possible}; {len(rank.seeds)} seeds)"


def _igb_inversions(summary: BlockSummary) -> str:
    """IGB's inversion number: the other seeds' inversions against the reference seed, summed."""
    rank = summary.rank
    if rank.reason:
        return f"n/a ({rank.reason})"
    return f"{rank.igb_inversions} (of {rank.igb_max_possible}; reference seed {rank.reference_seed}, {len(rank.seeds)} seeds)"


def ranks_report(public: dict[str, BlockSummary], iid: dict[str, BlockSummary]) -> str:
    """One markdown table per dataset: models (rows) by protocol, then the inversion numbers."""
    sections = []
    for dataset in sorted(set(public) & set(iid)):
        by_protocol = {"public": public[dataset], "iid": iid[dataset]}
        cells: dict[str, dict[str, str]] = {}
        for protocol, summary in by_protocol.items():
            for group, row in ((g, r) for r in summary.rows for g in summary.block.groups if g.label == r.label):
                cells.setdefault(model_of(group), {})[protocol] = _cell(row.test_mean, row.test_std)
        lines = [
            f"### {dataset}",
            "",
            "| model | public split: test accuracy (%) | i.i.d. subgraphs: test accuracy (%) |",
            "|---|---|---|",
        ]
        for model in sorted(cells):
            lines.append(f"| {model} | {cells[model].get('public', 'n/a')} | {cells[model].get('iid', 'n/a')} |")
        lines.append(
            f"| **IGB's inversion number** (summed against the reference seed) | {_igb_inversions(by_protocol['public'])} "
            f"| {_igb_inversions(by_protocol['iid'])} |"
        )
        lines.append(
            f"| **all-pairs inversion number** (mean / max over seed pairs) | {_inversions(by_protocol['public'])} "
            f"| {_inversions(by_protocol['iid'])} |"
        )
        sections.append("\n".join(lines))
    return "\n\n".join(sections) + "\n"


def ranks_csv(public: dict[str, BlockSummary], iid: dict[str, BlockSummary]) -> str:
    """``dataset,protocol,models,seeds,reference_seed,igb_inversions,mean_inversions,max_inversions,max_possible`` rows."""
    lines = ["dataset,protocol,models,seeds,reference_seed,igb_inversions,mean_inversions,max_inversions,max_possible"]
    for dataset in sorted(set(public) & set(iid)):
        for protocol, summary in (("public", public[dataset]), ("iid", iid[dataset])):
            rank = summary.rank
            lines.append(
                f"{dataset},{protocol},{rank.n_groups},{len(rank.seeds)},{'' if rank.reason else rank.reference_seed},"
                f"{'' if rank.reason else rank.igb_inversions},{rank.mean_inversions},{rank.max_inversions},{rank.max_possible}"
            )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=program_name("graphbench.analysis", "graphbench-analysis") + " igb-ranks",
        description="IGB rank stability (IGB's and the all-pairs inversion number across seeds) of a model set on a fixed "
        "split and on i.i.d. subgraphs.",
    )
    parser.add_argument(
        "--public", nargs="+", type=Path, required=True, metavar="DIR", help="runs on the fixed split (task=train)"
    )
    parser.add_argument("--iid", nargs="+", type=Path, required=True, metavar="DIR", help="runs of task=iid_eval")
    parser.add_argument("--csv", action="store_true", help="print CSV of the inversion numbers instead of markdown")
    args = parser.parse_args(argv)
    try:
        public, iid = summaries(args.public), summaries(args.iid)
    except ReportInputError as exc:
        parser.error(str(exc))
    if not set(public) & set(iid):
        print(
            f"error: no dataset has completed runs under both --public ({sorted(public)}) and --iid ({sorted(iid)})",
            file=sys.stderr,
        )
        return 1
    sys.stdout.write(ranks_csv(public, iid) if args.csv else ranks_report(public, iid))
    return 0
