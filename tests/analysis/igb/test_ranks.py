"""Tests for graphbench.analysis.igb.ranks: both inversion numbers per protocol, on fabricated runs.

Public split, models gcn, mlp, sage over seeds 0, 1, 2: seed 0 ranks gcn > mlp > sage, seed 1
mlp > gcn > sage, seed 2 sage > mlp > gcn. IGB's inversion number (seed 0 the reference):
I(0,1) + I(0,2) = 1 + 3 = 4, of at most 2 x 3 = 6; all pairs: I(0,1), I(0,2), I(1,2) = 1, 3, 2,
mean 2, max 3. i.i.d. subgraphs: every seed ranks gcn > mlp > sage, so both are 0.
"""

from __future__ import annotations

from pathlib import Path

from graphbench.analysis.igb.ranks import ranks_csv, ranks_report, summaries
from tests.report._runs import write_run

PUBLIC = {"gcn": (0.9, 0.8, 0.7), "mlp": (0.8, 0.9, 0.8), "sage": (0.7, 0.7, 0.9)}  # model: test per seed 0, 1, 2
IID = {"gcn": (0.9, 0.9, 0.9), "mlp": (0.8, 0.8, 0.8), "sage": (0.7, 0.7, 0.7)}


def protocol(root: Path, values: dict[str, tuple[float, ...]]) -> Path:
    for model, per_seed in values.items():
        for seed, value in enumerate(per_seed):
            write_run(root / f"{model}-{seed}", dataset="cora", model=model, seed=seed, test=value)
    return root


def test_ranks_report_gives_igbs_and_the_all_pairs_inversion_number(tmp_path: Path) -> None:
    public, iid = summaries([protocol(tmp_path / "public", PUBLIC)]), summaries([protocol(tmp_path / "iid", IID)])
    lines = ranks_report(public, iid).splitlines()
    assert (
        "| **IGB's inversion number** (summed against the reference seed) | 4 (of 6; reference seed 0, 3 seeds) "
        "| 0 (of 6; reference seed 0, 3 seeds) |" in lines
    )
    assert (
        "| **all-pairs inversion number** (mean / max over seed pairs) | 2.00 / 3 (of 3; 3 seeds) "
        "| 0.00 / 0 (of 3; 3 seeds) |" in lines
    )
    assert ranks_csv(public, iid).splitlines() == [
        "dataset,protocol,models,seeds,reference_seed,igb_inversions,mean_inversions,max_inversions,max_possible",
        "cora,public,3,3,0,4,2.0,3,3",
        "cora,iid,3,3,0,0,0.0,0,3",
    ]
