"""What made the runs of a table: one provenance line per table, and a warning for every row (a group
of runs aggregated together) whose runs came from different code or package versions.

A run's code is its commit (``+dirty <diff hash>`` when the checkout had edits), or the installed
graphbench version when it ran outside a checkout (:attr:`graphbench.run.provenance.CodeVersion.short`);
its packages are the versions in ``results.json``'s ``provenance.packages``. Runs written before
schema version 3 have no provenance: they are counted, never guessed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from graphbench.report.collect import Block, Group, Run
from graphbench.run.provenance import Provenance

#: the packages the table's line names, with how it names them
LINE_PACKAGES: dict[str, str] = {"torch": "torch", "torch_geometric": "PyG", "lightning": "Lightning"}
#: how the warnings name the recorded packages
PACKAGE_NAMES: dict[str, str] = {
    "python": "Python",
    "torch": "torch",
    "cuda": "CUDA",
    "cudnn": "cuDNN",
    "torch_geometric": "PyG",
    "lightning": "Lightning",
    "hydra": "Hydra",
    "torchmetrics": "torchmetrics",
    "ogb": "OGB",
}


def run_provenance(run: Run) -> Provenance | None:
    return run.record.provenance if run.record is not None else None


def code_of(provenance: Provenance) -> str:
    """The run's code: ``f90b34d5a534``, ``f90b34d5a534+dirty 3593938c`` or ``graphbench 0.1.0``."""
    return provenance.code.short


def machine_of(provenance: Provenance) -> str:
    """``AMD EPYC (2 cores), no GPU`` or ``Intel Xeon (64 cores), 4 × NVIDIA H200``."""
    machine = provenance.machine
    cores = machine.get("cpu_count")
    cpu = f"{machine.get('cpu') or 'unknown CPU'}" + (f" ({cores} cores)" if cores else "")
    gpus = Counter(str(name) for name in machine.get("gpus") or [])
    return f"{cpu}, " + (", ".join(f"{count} × {name}" for name, count in gpus.items()) if gpus else "no GPU")


def counted(values: Sequence[str]) -> str:
    """``a`` when all are ``a``; ``a (2 runs), b (1 run)`` otherwise (most frequent first)."""
    counts = Counter(values).most_common()
    if len(counts) == 1:
        return counts[0][0]
    return ", ".join(f"{value} ({n} run{'s' if n != 1 else ''})" for value, n in counts)


def provenance_line(block: Block) -> str:
    """One line: the code, torch/PyG/Lightning versions and machines of the block's runs."""
    runs = [run for group in block.groups for run in group.runs]
    known = [p for p in (run_provenance(run) for run in runs) if p is not None]
    missing = len(runs) - len(known)
    without = f"{missing} run{'s' if missing != 1 else ''} without provenance (results.json before schema version 3)"
    if not known:
        return f"Provenance: {without}."
    packages = ", ".join(f"{name} {counted([str(p.packages.get(key)) for p in known])}" for key, name in LINE_PACKAGES.items())
    line = (
        f"Provenance: code {counted([code_of(p) for p in known])}; {packages}; machine {counted([machine_of(p) for p in known])}"
    )
    return line + (f"; {without}." if missing else ".")


def mixed(group: Group) -> list[str]:
    """What the runs of ``group`` disagree on: ``commits a (2 runs), b (1 run)``, ``torch 2.4.0, 2.5.1``, ..."""
    known = [p for p in (run_provenance(run) for run in group.runs) if p is not None]
    found: list[str] = []
    codes = [code_of(p) for p in known]
    if len(set(codes)) > 1:
        found.append(f"code {counted(codes)}")
    for key in dict.fromkeys(key for p in known for key in p.packages):
        versions = [str(p.packages.get(key)) for p in known]
        if len(set(versions)) > 1:
            found.append(f"{PACKAGE_NAMES.get(key, key)} {counted(versions)}")
    return found


def mixed_warnings(block: Block) -> list[str]:
    """``Warning: row `model=gcn` mixes code a (2 runs), b (1 run); torch ...``: one line per row whose
    runs came from different code or package versions (their mean compares more than the config)."""
    return [
        f"Warning: row `{group.label}` mixes {'; '.join(found)}: its runs are not from one code and package set."
        for group in block.groups
        if (found := mixed(group))
    ]
