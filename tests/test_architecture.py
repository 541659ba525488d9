"""The import graph of ``src/graphbench``: no cycles between modules, and no import from a lower room
into a higher one, in the order ``docs/architecture.md`` lists the rooms (its "Rooms" section)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "graphbench"


def rooms_from_doc(text: str) -> list[list[str]]:
    """The rooms of the "## Rooms" section, top first: each numbered line's backticked names before its dash."""
    section = text.split("\n## Rooms", 1)[1].split("\n## ", 1)[0]
    levels = []
    for line in section.splitlines():
        match = re.match(r"^\d+\.\s+(.*?)\s+[-—]", line)
        if match:
            levels.append(re.findall(r"`([\w.]+)`", match.group(1)))
    return levels


def module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, name: str, modules: set[str]) -> Iterator[str]:
    """Every module of the package that ``path`` (module ``name``) imports, at any depth of its code
    (function-level and ``TYPE_CHECKING`` imports included); ``from pkg import sub`` counts ``pkg.sub``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # graphbench.x.y.Name -> graphbench.x.y
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def import_graph(src: Path, package: str) -> dict[str, set[str]]:
    paths = {module_name(p, src): p for p in (src / package).rglob("*.py")}
    return {name: set(imports_of(path, name, set(paths))) for name, path in paths.items()}


def room_of(module: str, package: str) -> str:
    """``graphbench.data.sources.base`` -> ``data``; a top-level module is its own room (``main``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def upward_imports(graph: dict[str, set[str]], levels: list[list[str]], package: str) -> list[str]:
    """``a -> b`` for every import from room ``a`` into a room listed above it or beside it (same line:
    peers do not import each other). The package's ``__init__`` (it registers the config resolvers)
    and the ``conf`` package (YAML files only) sit outside the rooms."""
    rank = {room: i for i, names in enumerate(levels) for room in names}
    problems = []
    for a, targets in sorted(graph.items()):
        ra = room_of(a, package)
        if a == package:
            continue
        if ra not in rank:
            problems.append(f"{a}: room {ra!r} is not listed in docs/architecture.md's Rooms")
            continue
        for b in sorted(targets):
            rb = room_of(b, package)
            if rb in ("", "conf") and b in (package, f"{package}.conf"):
                continue
            if rb != ra and rank.get(rb, -1) <= rank[ra]:
                problems.append(f"{a} -> {b}: room {ra!r} may not import {rb!r}")
    return problems


def test_graphbench_has_no_import_cycle_and_no_upward_import() -> None:
    graph = import_graph(REPO / "src", PACKAGE)
    levels = rooms_from_doc((REPO / "docs" / "architecture.md").read_text())
    assert len(levels) >= 8, levels
    assert cycles(graph) == []
    assert upward_imports(graph, levels, PACKAGE) == []


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


DOC = """# x

## Rooms

1. `tasks` — the tasks
2. `build`, `report` — builders; tables
3. `run` — the frame

## Next
"""


def test_the_checker_finds_a_cycle_an_upward_import_a_peer_import_and_an_unlisted_room(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/build.py": "from pkg.tasks.train import train\nfrom pkg import report\n",
            "pkg/report.py": "",
            "pkg/tasks/__init__.py": "",
            "pkg/tasks/train.py": "from pkg.run.frame import run_frame\nfrom . import igb\n",
            "pkg/tasks/igb.py": "def f():\n    from .train import train\n",
            "pkg/run/__init__.py": "",
            "pkg/run/frame.py": "import pkg.run.record\n",
            "pkg/run/record.py": "",
            "pkg/extra.py": "from pkg.run import record\n",
        },
    )
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.tasks.train"] == {"pkg.run.frame", "pkg.tasks.igb"}
    assert graph["pkg.run.frame"] == {"pkg.run.record"}
    assert cycles(graph) == [["pkg.tasks.igb", "pkg.tasks.train"]]
    assert upward_imports(graph, rooms_from_doc(DOC), "pkg") == [
        "pkg.build -> pkg.report: room 'build' may not import 'report'",
        "pkg.build -> pkg.tasks.train: room 'build' may not import 'tasks'",
        "pkg.extra: room 'extra' is not listed in docs/architecture.md's Rooms",
    ]


@pytest.mark.parametrize("line", ["1. `a`, `b` — peers", "2. `a` - plain dash"])
def test_rooms_are_read_from_numbered_lines(line: str) -> None:
    names = rooms_from_doc(f"\n## Rooms\n\n{line}\n")
    assert names[0][0] == "a"


# -- tests mirror the package: src/graphbench/<path>/<module>.py -> tests/<path>/test_<module>.py -------------

#: modules that hold logic yet have no mirrored test file, each with the reason (package-relative paths).
WITHOUT_MIRRORED_TEST: dict[str, str] = {}


def has_logic(path: Path) -> bool:
    """Whether a module defines a function or a class. One that only imports and re-exports names, assigns
    constants or calls another module's ``main`` (an ``__init__``, a ``__main__``) holds no logic."""
    tree = ast.parse(path.read_text(), str(path))
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for node in ast.walk(tree))


def mirrored_test(module: Path) -> Path:
    """``a/b/c.py`` -> ``a/b/test_c.py``; a package's ``__main__.py`` is its command line: ``a/test_main.py``;
    an ``__init__.py`` that holds logic: ``a/test_init.py``."""
    stem = "main" if module.stem == "__main__" else module.stem.strip("_")
    return module.with_name(f"test_{stem}.py")


def mirror_problems(package: Path, tests: Path, allowed: dict[str, str]) -> list[str]:
    """One line for each module under ``package`` with logic and no test at its mirrored path under ``tests``,
    and one for each stale entry of ``allowed`` (not a module, no logic, or now mirrored)."""
    problems = []
    for path in sorted(package.rglob("*.py")):
        module = path.relative_to(package)
        name = module.as_posix()
        mirrored = (tests / mirrored_test(module)).is_file()
        if name in allowed:
            if not has_logic(path):
                problems.append(f"{name}: stale allow-list entry, the module holds no logic")
            elif mirrored:
                problems.append(f"{name}: stale allow-list entry, tests/{mirrored_test(module).as_posix()} exists")
        elif has_logic(path) and not mirrored:
            problems.append(f"{name}: holds logic but has no tests/{mirrored_test(module).as_posix()}")
    problems += [f"{name}: stale allow-list entry, no such module" for name in allowed if not (package / name).is_file()]
    return problems


def test_every_module_with_logic_has_a_mirrored_test() -> None:
    problems = mirror_problems(REPO / "src" / PACKAGE, REPO / "tests", WITHOUT_MIRRORED_TEST)
    assert problems == [], "\n".join(problems)


def test_the_mirror_check_names_missing_tests_and_stale_allow_list_entries(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "from .a import f\n__all__ = ['f']\n",
            "pkg/__main__.py": "from pkg.a import f\n\nf()\n",
            "pkg/a.py": "def f():\n    return 1\n",
            "pkg/constants.py": "LIMIT = 3\n",
            "pkg/cli/__main__.py": "class Args:\n    pass\n",
            "pkg/sub/__init__.py": "def helper():\n    pass\n",
            "pkg/sub/b.py": "class B:\n    pass\n",
            "pkg/sub/c.py": "def g():\n    pass\n",
            "pkg/sub/d.py": "def h():\n    pass\n",
            "tests/test_a.py": "",
            "tests/sub/test_c.py": "",
        },
    )
    allowed = {"sub/c.py": "tested", "sub/d.py": "reason", "constants.py": "none", "gone.py": "moved"}
    assert mirror_problems(tmp_path / "pkg", tmp_path / "tests", allowed) == [
        "cli/__main__.py: holds logic but has no tests/cli/test_main.py",
        "constants.py: stale allow-list entry, the module holds no logic",
        "sub/__init__.py: holds logic but has no tests/sub/test_init.py",
        "sub/b.py: holds logic but has no tests/sub/test_b.py",
        "sub/c.py: stale allow-list entry, tests/sub/test_c.py exists",
        "gone.py: stale allow-list entry, no such module",
    ]


# -- tasks read top to bottom: set-up, fit, record; the algorithms live in analysis/ -------------------------

#: the most lines a function of the tasks or the builders may span, from its ``def`` to its last line
MAX_FUNCTION_LINES: int = 60
#: the package paths that hold the limit: every module under ``tasks/`` and ``build/``
SHORT_FUNCTION_PATHS: tuple[str, ...] = ("tasks", "build")


def long_functions(path: Path, limit: int) -> list[str]:
    """``<file>:<line> <name>: <n> lines`` for every function or method of ``path`` that spans more than
    ``limit`` lines (docstring included; a nested function counts within its parent and on its own)."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > limit:
                found.append(f"{path.name}:{node.lineno} {node.name}: {lines} lines")
    return sorted(found, key=lambda line: int(line.split(":")[1].split()[0]))


def test_no_function_of_the_tasks_or_the_builders_spans_more_than_60_lines() -> None:
    package = REPO / "src" / PACKAGE
    paths = []
    for name in SHORT_FUNCTION_PATHS:
        paths += sorted((package / name).rglob("*.py")) if (package / name).is_dir() else [package / name]
    assert len(paths) > 5, paths
    problems = [line for path in paths for line in long_functions(path, MAX_FUNCTION_LINES)]
    assert problems == [], "move the algorithm into src/graphbench/analysis/ (tasks: set-up, fit, record):\n" + "\n".join(
        problems
    )


def test_the_length_check_names_each_long_function_nested_ones_too(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "m.py": "def short():\n    return 1\n\n\n"
            "def outer():\n    def inner():\n        a = 1\n        return a\n\n    return inner\n",
        },
    )
    assert long_functions(tmp_path / "m.py", 2) == ["m.py:5 outer: 6 lines", "m.py:6 inner: 3 lines"]
    assert long_functions(tmp_path / "m.py", 6) == []


# -- each package's __init__ docstring names its modules ------------------------------------------------------


def unnamed_modules(package: Path) -> list[str]:
    """``<package>/__init__.py: <module>`` for every module and subpackage of every package under ``package``
    (itself included) whose name is not a word of its package's ``__init__`` docstring."""
    problems = []
    for init in sorted(package.rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(), str(init))) or ""
        folder = init.parent
        names = [p.stem for p in folder.glob("*.py") if p.name != "__init__.py"]
        names += [p.name for p in folder.iterdir() if (p / "__init__.py").is_file()]
        for name in sorted(names):
            if not re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", doc):
                problems.append(f"{init.relative_to(package).as_posix()}: {name}")
    return problems


def test_each_package_docstring_names_its_modules() -> None:
    problems = unnamed_modules(REPO / "src" / PACKAGE)
    assert problems == [], "name each module in its package's __init__ docstring:\n" + "\n".join(problems)


def test_the_docstring_check_names_each_unnamed_module(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": '"""The package: :mod:`pkg.alpha` and ``sub``."""\n',
            "pkg/alpha.py": "",
            "pkg/alphabet.py": "",
            "pkg/__main__.py": "",
            "pkg/sub/__init__.py": "",
            "pkg/sub/beta.py": "",
        },
    )
    assert unnamed_modules(tmp_path / "pkg") == ["__init__.py: __main__", "__init__.py: alphabet", "sub/__init__.py: beta"]
