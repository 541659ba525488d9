"""Device-generic code: every tensor that code handling model or batch tensors makes is made on the
device of its inputs (``device=x.device``), so that graphbench runs on a GPU as it does in the CPU
tests (docs/gpu.md). An AST scan of ``src/graphbench`` finds every tensor factory call
(``torch.zeros(...)``, ``torch.arange(...)``, ...) without a ``device=`` keyword; each one must sit in
a module or function of :data:`ALLOWED`, whose entries say why the host is the right place there.

Not flagged: ``*_like`` and ``x.new_*`` (they inherit the device), a factory whose result is moved at
once (``torch.from_numpy(a).to(x.device)``), and module state that ``Module.to`` moves with the
module: ``nn.Parameter(torch.empty(...))``, ``register_buffer(name, torch.zeros(...))`` and
torchmetrics' ``add_state(name, default=torch.zeros(...))``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.paths import REPO

PACKAGE = REPO / "src" / "graphbench"

#: ``torch.<name>`` calls that make a new tensor on the default (host) device unless given ``device=``
FACTORIES: frozenset[str] = frozenset(
    {
        "tensor",
        "as_tensor",
        "from_numpy",
        "scalar_tensor",
        "zeros",
        "ones",
        "empty",
        "empty_strided",
        "full",
        "eye",
        "arange",
        "range",
        "linspace",
        "logspace",
        "rand",
        "randn",
        "randint",
        "randperm",
        "normal",
        "tril_indices",
        "triu_indices",
    }
)

#: calls whose tensor arguments are module state, moved to the device by ``Module.to``
STATE_CALLS: frozenset[str] = frozenset({"Parameter", "register_buffer", "add_state"})

#: where a factory call without ``device=`` is right: a package or module (``graphbench.x``) or one
#: function or method in a module (``graphbench.x:Class.method``), each with the reason
ALLOWED: dict[str, str] = {
    # packages whose code runs on host data before training, never inside a step
    "graphbench.data.sources": "raw-file readers: they build the dataset on the host from files and NumPy arrays",
    "graphbench.transforms": "PyG transforms precomputed once on the host dataset before training (PE, rewiring, norms)",
    "graphbench.data.datamodules": "build host datasets, splits and loaders; Lightning moves every batch to the device",
    "graphbench.data.splits": "split files and seeded split draws, on the host before training",
    "graphbench.speedups": "CPU-specific kernels and patches (the one seam for them; off on other devices)",
    # single functions
    "graphbench.data.store.graph_store:GraphStore.graph_ids": (
        "positions come from the loader's sampler as Python ints; DeviceStore.batch sends the ids to the device"
    ),
    "graphbench.data.samplers.cluster_gcn:metis_parts": "METIS partitions in NumPy on the host (pymetis)",
    "graphbench.data.samplers.saint:StepSeeds.__iter__": "the loader's per-step seeds, handed out as Python ints",
    "graphbench.callbacks.ntk:NTKAlignment._draw": (
        "the sample is drawn by a seeded host generator, the same on every device, then moved to the device"
    ),
    "graphbench.callbacks.rng_state:RNGState.state_dict": "the host RNGs' state (NumPy) for the checkpoint",
    "graphbench.analysis.igb.sampler:subgraph_data": "IGB subgraphs are sampled in NumPy on the host graph",
    "graphbench.analysis.memorization:memorization_sets": "node sets drawn by a seeded host generator before any training",
    "graphbench.analysis.memorization:memorization_metrics": "summary statistics of per-seed accuracies (Python floats)",
    "graphbench.analysis.igb.validutil:read_labels": "labels read from a file on the host, moved with the graph they label",
    "graphbench.analysis.mia:shadow_membership": "no tensor input: the shadow split is drawn from a seed on the host",
    "graphbench.data.store.padding:choose_buckets": "bucket sizes from the dataset's per-graph counts, once at setup on the host",
}


@dataclass(frozen=True)
class FactoryCall:
    """A tensor factory call without ``device=``: where it is and what it calls."""

    module: str
    function: str  # the qualified name of the enclosing function ("" at module level)
    line: int
    name: str

    def __str__(self) -> str:
        return f"{self.module}:{self.function or '<module>'} line {self.line}: torch.{self.name}(...) without device="


def _torch_factory_name(call: ast.Call, imported: dict[str, str]) -> str | None:
    """``torch.zeros(...)`` -> ``zeros``; a factory imported by name (``from torch import zeros``)
    counts too."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "torch":
        return func.attr if func.attr in FACTORIES else None
    if isinstance(func, ast.Name) and imported.get(func.id) in FACTORIES:
        return imported[func.id]
    return None


def _callee_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _moves_to_a_device(call: ast.Call) -> bool:
    """A ``.to(...)`` call with a device: ``device=`` or a first argument that is not a
    ``torch.<dtype>`` attribute."""
    if any(keyword.arg == "device" for keyword in call.keywords):
        return True
    if not call.args:
        return False
    first = call.args[0]
    return not (isinstance(first, ast.Attribute) and isinstance(first.value, ast.Name) and first.value.id == "torch")


def factory_calls_without_device(source: str, module: str) -> list[FactoryCall]:
    """Every tensor factory call of ``source`` (the text of ``module``) that takes no ``device=`` and
    is neither module state nor moved to a device at once."""
    tree = ast.parse(source)
    imported = {
        alias.asname or alias.name: alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "torch"
        for alias in node.names
    }
    found: list[FactoryCall] = []

    def visit(node: ast.AST, scope: list[str], exempt: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            scope = [*scope, node.name]
        if isinstance(node, ast.Call):
            name = _torch_factory_name(node, imported)
            if name is not None and not exempt and not any(k.arg == "device" for k in node.keywords):
                found.append(FactoryCall(module, ".".join(scope), node.lineno, name))
            if _callee_name(node) in STATE_CALLS:
                for child in ast.iter_child_nodes(node):
                    visit(child, scope, exempt=child is not node.func)
                return
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "to" and _moves_to_a_device(node):
                visit(func.value, scope, exempt=True)
                for child in [*node.args, *node.keywords]:
                    visit(child, scope, exempt)
                return
        for child in ast.iter_child_nodes(node):
            visit(child, scope, exempt if isinstance(node, ast.keyword) else False)

    visit(tree, [], exempt=False)
    return found


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def allowed_by(call: FactoryCall) -> str | None:
    """The :data:`ALLOWED` entry that covers ``call``, if any."""
    for entry in ALLOWED:
        module, _, function = entry.partition(":")
        if function:
            if call.module == module and (call.function == function or call.function.startswith(function + ".")):
                return entry
        elif call.module == module or call.module.startswith(module + "."):
            return entry
    return None


def package_calls() -> list[FactoryCall]:
    return [
        call
        for path in sorted(PACKAGE.rglob("*.py"))
        for call in factory_calls_without_device(path.read_text(encoding="utf-8"), module_name(path))
    ]


def test_every_tensor_factory_call_outside_the_allow_list_takes_a_device() -> None:
    offending = [str(call) for call in package_calls() if allowed_by(call) is None]
    assert not offending, (
        "tensors made on the host where the inputs may be on a GPU: pass device=<an input>.device, "
        "or add the module/function to ALLOWED in tests/test_device_generic.py with the reason:\n" + "\n".join(offending)
    )


def test_every_allow_list_entry_names_existing_code_and_each_function_entry_is_still_needed() -> None:
    calls = package_calls()
    used = {allowed_by(call) for call in calls}
    modules = {module_name(path) for path in PACKAGE.rglob("*.py")}
    for entry, reason in ALLOWED.items():
        module, _, function = entry.partition(":")
        assert reason.strip(), f"{entry}: an allow-list entry says why"
        assert any(m == module or m.startswith(module + ".") for m in modules), f"{entry}: no such module in src/graphbench"
        if function:
            assert entry in used, f"{entry}: makes no tensor without device= any more; remove it from ALLOWED"


SAMPLE = """
import torch
from torch import arange as make_range, nn

def step(x):
    ok = torch.zeros(3, device=x.device)
    also_ok = torch.zeros_like(x), x.new_zeros(3), torch.from_numpy(a).to(x.device)
    bad = torch.tensor([x.numel() - 1])
    worse = make_range(4)
    cast_only = torch.from_numpy(a).to(torch.float32)
    return ok, bad

class Layer(nn.Module):
    def __init__(self):
        self.weight = nn.Parameter(torch.empty(3))
        self.register_buffer("count", torch.zeros(()))
        self.add_state("total", default=torch.tensor(0.0), dist_reduce_fx="sum")
        self.other = torch.ones(2)
"""


def test_the_scan_finds_host_factories_and_spares_device_aware_calls_and_module_state() -> None:
    found = factory_calls_without_device(SAMPLE, "sample")
    assert [(c.function, c.line, c.name) for c in found] == [
        ("step", 8, "tensor"),
        ("step", 9, "arange"),
        ("step", 10, "from_numpy"),
        ("Layer.__init__", 18, "ones"),
    ]


@pytest.mark.parametrize(
    ("call", "entry"),
    [
        (FactoryCall("graphbench.data.sources.graph.zinc", "read", 1, "tensor"), "graphbench.data.sources"),
        (
            FactoryCall("graphbench.callbacks.ntk", "NTKAlignment._draw", 1, "randperm"),
            "graphbench.callbacks.ntk:NTKAlignment._draw",
        ),
        (FactoryCall("graphbench.callbacks.ntk", "NTKAlignment._prepare", 1, "arange"), None),
        (FactoryCall("graphbench.data.sourcesextra", "read", 1, "tensor"), None),
    ],
)
def test_the_allow_list_covers_its_packages_and_functions_only(call: FactoryCall, entry: str | None) -> None:
    assert allowed_by(call) == entry
