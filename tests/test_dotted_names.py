"""Every dotted ``graphbench.…`` name that prose mentions resolves to a module or an object of the package:
in docstrings, comments and strings of the code (src/, benchmarks/, scripts/), in the YAML files of conf/
(comments and ``_target_`` values alike) and in the docs and README. A renamed or moved function leaves
no stale reference behind."""

from __future__ import annotations

import importlib
import importlib.util
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.paths import REPO

NAME = re.compile(r"(?<![\w./-])graphbench(?:\.[A-Za-z_]\w*)+")


def resolves(name: str) -> bool:
    """``name`` is a module of the package, or an attribute path inside its longest importable module."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        module = ".".join(parts[:end])
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            continue
        target: object = importlib.import_module(module)
        for attribute in parts[end:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


def prose_of_python(path: Path) -> Iterator[str]:
    """The comments and string literals (docstrings among them) of a Python file, not its code."""
    for token in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        if token.type in (tokenize.COMMENT, tokenize.STRING):
            yield token.string


def mentioned_names() -> dict[str, str]:
    """Each dotted name -> the first file that mentions it."""
    texts: list[tuple[Path, str]] = []
    for folder in ("src", "benchmarks", "scripts"):
        texts += [(p, text) for p in sorted((REPO / folder).rglob("*.py")) for text in prose_of_python(p)]
    for pattern in ("conf/**/*.yaml", "docs/**/*.md", "README.md"):
        texts += [(p, p.read_text()) for p in sorted(REPO.glob(pattern))]
    names: dict[str, str] = {}
    for path, text in texts:
        for name in NAME.findall(text):
            names.setdefault(name, str(path.relative_to(REPO)))
    return names


def test_every_dotted_name_in_prose_resolves() -> None:
    stale = {name: where for name, where in mentioned_names().items() if not resolves(name)}
    assert not stale, "stale references: " + "; ".join(f"{name} ({where})" for name, where in sorted(stale.items()))


def test_the_checker_finds_names_and_tells_stale_ones_apart(tmp_path: Path) -> None:
    assert resolves("graphbench.build.model.network_builder") and resolves("graphbench.run.threads")
    assert not resolves("graphbench.tasks.train.network_builder") and not resolves("graphbench.no_such_room")
    module = tmp_path / "m.py"
    module.write_text(
        '"""See graphbench.build.data.build_datamodule."""\ngraphbench = object()  # graphbench.run.frame\nx = graphbench.state_dict\n'
    )
    prose = " ".join(prose_of_python(module))
    assert NAME.findall(prose) == ["graphbench.build.data.build_datamodule", "graphbench.run.frame"]


@pytest.mark.parametrize("text", ["~graphbench.run.threads.cpu_allowance", "`graphbench.run.record.RunRecord`"])
def test_sphinx_roles_and_code_spans_are_read(text: str) -> None:
    assert NAME.findall(text) == [text.strip("~`")]
