"""The code, configs and documents state what is, not how it came about: no ``issue <number>`` in
``src/``, ``docs/``, ``README.md``, ``conf/`` or ``benchmarks/`` (the history of a change lives in git)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.paths import REPO

#: what the check reads, relative to the repository root
CHECKED = ("src", "docs", "README.md", "conf", "benchmarks")
#: folders the check skips: build and cache outputs, not sources
SKIPPED_DIRS = ("__pycache__",)
SKIPPED_SUFFIXES = (".egg-info",)
ISSUE_NUMBER = re.compile(r"\bissues? #?\d+", re.IGNORECASE)


def checked_files(root: Path, names: tuple[str, ...] = CHECKED) -> list[Path]:
    """The text files under ``names`` of ``root``, without build and cache folders."""
    files = []
    for name in names:
        path = root / name
        candidates = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for candidate in candidates:
            parts = candidate.relative_to(root).parts[:-1]
            if any(part in SKIPPED_DIRS or part.endswith(SKIPPED_SUFFIXES) for part in parts):
                continue
            files.append(candidate)
    return files


def issue_numbers(root: Path, names: tuple[str, ...] = CHECKED) -> list[str]:
    """``path:line: text`` for every ``issue <number>`` in the text files under ``names`` of ``root``."""
    found = []
    for path in checked_files(root, names):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # a figure or other binary file
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if ISSUE_NUMBER.search(line):
                found.append(f"{path.relative_to(root).as_posix()}:{number}: {line.strip()}")
    return found


def test_no_issue_numbers_in_code_configs_or_docs() -> None:
    found = issue_numbers(REPO)
    assert found == [], "say what the code does, not which issue asked for it:\n" + "\n".join(found)


def test_the_check_finds_a_planted_issue_number(tmp_path: Path) -> None:
    files = {
        "src/pkg/a.py": '"""Parse the file (issue 36)."""\n',
        "docs/notes.md": "# Notes\n\nAs Issues 11, 13 asked.\n",
        "README.md": "See issue #7.\n",
        "conf/x.yaml": "# fixed in issue 4\nkey: 1\n",
        "benchmarks/b.py": "# no number here: the issue's target\n",
        "src/pkg.egg-info/PKG-INFO": "issue 37\n",
        "src/pkg/__pycache__/a.txt": "issue 37\n",
        "docs/figure.png": "",
        "tests/test_x.py": "# issue 5: tests are not checked\n",
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "docs" / "figure.png").write_bytes(b"\x89PNG\xff\xfe issue 1")
    assert issue_numbers(tmp_path) == [
        'src/pkg/a.py:1: """Parse the file (issue 36)."""',
        "docs/notes.md:3: As Issues 11, 13 asked.",
        "README.md:1: See issue #7.",
        "conf/x.yaml:1: # fixed in issue 4",
    ]
