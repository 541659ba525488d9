"""Other packages' private names (``obj._name``, ``from pkg import _name``) are used only in
``graphbench/speedups/``, the one room that may depend on another package's internals, or where the
allow-list below says why nothing public does the job. An attribute's owner is not known statically,
so the rule covers every private attribute read through anything but ``self``, ``cls`` or ``super()``:
a class's private names are its own business, also within graphbench. Read through ``self``, ``cls`` or
``super()``, a private name that nothing in graphbench defines (no ``def _name``, no ``self._name = ...``,
no class attribute) is a base class's from another package, and counts as a use too. Overriding a method that a
package documents as its extension point (PyG's ``BaseSampler._sample``, in
``data/samplers/neighbor_loader.py``) defines the name, and is not a use."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.paths import REPO

#: (module path under the package, private name) -> why it is used
ALLOWED: dict[tuple[str, str], str] = {
    # Hydra reports a composition error only through hydra._internal.utils.run_and_report, which the
    # one-line error for a mistyped option wraps
    ("run/config_errors.py", "_internal"): "Hydra has no public hook for its composition errors",
    # Batch.from_data_list's bookkeeping, so get_example/index_select work on batches built without it
    ("data/store/batching.py", "_num_graphs"): "PyG's Batch has no public constructor for it",
    ("data/store/batching.py", "_slice_dict"): "PyG's Batch has no public constructor for it",
    ("data/store/batching.py", "_inc_dict"): "PyG's Batch has no public constructor for it",
    # torch.nn.MultiheadAttention re-initializes its packed projections only through this method
    ("modules/layers/gps.py", "_reset_parameters"): "MultiheadAttention has no public reset",
    # a tensor's in-place version counter: a cached propagation plan is stale once its edges change
    ("modules/propagation.py", "_version"): "PyTorch exposes no other in-place change counter",
    # NumPy's array unpickler, allowed by name in torch.load(weights_only=True)'s safe globals
    ("data/io/safe_load.py", "_reconstruct"): "the safe-globals allow-list must name NumPy's unpickler",
    ("data/io/safe_load.py", "_core"): "NumPy 2 keeps _reconstruct under numpy._core",
    # read through self: Lightning's loggers hold their run in _experiment, and their public `experiment`
    # property creates one; finishing or flushing a run that never started must not start it
    ("run/loggers.py", "_experiment"): "Lightning's loggers have no public 'is there a run yet'",
    # WandbLogger hands its init arguments, anonymous=None among them, to wandb.init from this dict
    ("run/loggers.py", "_wandb_init"): "WandbLogger passes anonymous=None to wandb.init with no public way to drop it",
}


def private_uses(package: Path, exempt: tuple[str, ...] = ("speedups",)) -> list[tuple[str, str, int]]:
    """Every private name read from something other than ``self``/``cls``/``super()``, or imported from
    another package, in ``package`` outside the ``exempt`` sub-packages: (module path, name, line)."""
    found = []
    trees = {path.relative_to(package): ast.parse(path.read_text(), filename=str(path)) for path in sorted(package.rglob("*.py"))}
    defined = {name for tree in trees.values() for name in defined_names(tree)}
    for relative, tree in trees.items():
        if relative.parts[0] in exempt:
            continue
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Attribute) and is_private(node.attr) and not own(node.value):
                names = [node.attr]
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Load)
                and is_private(node.attr)
                and node.attr not in defined
            ):
                names = [node.attr]  # read through self/cls/super(), defined by a base class of another package
            elif (
                isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.split(".")[0] != package.name
            ):
                names = [part for part in node.module.split(".") if is_private(part)]
                names += [alias.name for alias in node.names if is_private(alias.name)]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names if alias.name.split(".")[0] != package.name]
                names = [part for module in modules for part in module.split(".") if is_private(part)]
            found += [(relative.as_posix(), name, node.lineno) for name in names]
    return found


def defined_names(tree: ast.AST) -> set[str]:
    """The names a module defines: functions and classes, assigned attributes (``self._x = ...``) and
    assigned names (class attributes among them)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def own(value: ast.expr) -> bool:
    """``self``, ``cls`` or ``super()``: the class's own names."""
    if isinstance(value, ast.Name):
        return value.id in ("self", "cls")
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super"


def problems(uses: list[tuple[str, str, int]], allowed: dict[tuple[str, str], str]) -> list[str]:
    """Uses not on the allow-list, and allow-list entries no longer used."""
    unlisted = [f"{module}:{line}: {name}" for module, name, line in uses if (module, name) not in allowed]
    used = {(module, name) for module, name, _ in uses}
    stale = [f"allow-list entry {module}: {name} is not used" for module, name in allowed if (module, name) not in used]
    return unlisted + stale


def test_graphbench_uses_other_packages_private_names_only_in_speedups_or_where_listed() -> None:
    assert problems(private_uses(REPO / "src" / "graphbench"), ALLOWED) == []


def test_the_check_finds_private_attributes_and_imports_outside_speedups_and_stale_entries(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "speedups").mkdir(parents=True)
    (package / "speedups" / "patch.py").write_text("import torch\nx = torch._C\n")
    (package / "model.py").write_text(
        "import hydra._internal.utils as hu\n"
        "from numpy._core import _reconstruct\n"
        "from pkg.own import _helper\n"
        "class A:\n"
        "    def f(self, other):\n"
        "        super()._g()\n"
        "        return self._x + other._y + type(self).__name__\n"
        "    def _g(self):\n"
        "        self._x = 1\n"
        "        return self._base_private\n"
    )
    uses = sorted(private_uses(package))
    assert uses == [
        ("model.py", "_base_private", 10),
        ("model.py", "_core", 2),
        ("model.py", "_internal", 1),
        ("model.py", "_reconstruct", 2),
        ("model.py", "_y", 7),
    ]
    assert problems(uses, {("model.py", "_y"): "why", ("model.py", "_gone"): "why"}) == [
        "model.py:10: _base_private",
        "model.py:2: _core",
        "model.py:1: _internal",
        "model.py:2: _reconstruct",
        "allow-list entry model.py: _gone is not used",
    ]
