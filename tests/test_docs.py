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


#: phrases that narrate how a page came about instead of stating what is (history lives in git)
NARRATION = re.compile(r"^#+ at commit|first machine|so far only|applied by hand", re.IGNORECASE | re.MULTILINE)


def narration(root: Path, names: tuple[str, ...] = ("docs", "README.md")) -> list[str]:
    """``path:line: text`` for every line of the Markdown under ``names`` of ``root`` that :data:`NARRATION` matches."""
    found = []
    for path in checked_files(root, names):
        if path.suffix != ".md":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if NARRATION.search(line):
                found.append(f"{path.relative_to(root).as_posix()}:{number}: {line.strip()}")
    return found


def test_docs_state_what_is_without_narrating_history() -> None:
    found = narration(REPO)
    assert found == [], "state what the code does and where a figure comes from, not how it came about:\n" + "\n".join(found)


def test_the_narration_check_finds_planted_phrases(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "perf.md").write_text("# Perf\n\n### At commit abc123\n\nMeasured so far only here.\n")
    (tmp_path / "README.md").write_text("Run on the first machine, with the fix applied by hand.\nAt commit abc123 it ran.\n")
    assert narration(tmp_path) == [
        "docs/perf.md:3: ### At commit abc123",
        "docs/perf.md:5: Measured so far only here.",
        "README.md:1: Run on the first machine, with the fix applied by hand.",
    ]


#: a generated dataset's split sizes as docs/datasets_graph.md's table gives them
GENERATED_SIZES = re.compile(r"^\| `(?P<name>[\w-]+)`.*\| generated (?P<sizes>[\d,]+ / [\d,]+ / [\d,]+)")


def generated_split_sizes(dataset: dict) -> tuple[int, int, int]:
    """A generated dataset's train / val / test sizes: its ``num_train``, ``num_val`` and ``num_test``, or
    the sizes its ``split`` line states (datasets generated per graph size)."""
    if "num_train" in dataset:
        return (dataset["num_train"], dataset["num_val"], dataset["num_test"])
    sizes = re.match(r"generated ([\d,]+) / ([\d,]+) / ([\d,]+)", dataset["split"])
    assert sizes is not None, f"{dataset['name']}: neither num_train/num_val/num_test nor a 'generated A / B / C' split"
    return tuple(int(size.replace(",", "")) for size in sizes.groups())  # type: ignore[return-value]


def test_graph_datasets_page_gives_the_generated_split_sizes_of_the_configs() -> None:
    import yaml

    rows = [GENERATED_SIZES.match(line) for line in (REPO / "docs" / "datasets_graph.md").read_text().splitlines()]
    documented = {row["name"]: tuple(int(size.replace(",", "")) for size in row["sizes"].split(" / ")) for row in rows if row}
    assert {"cycles", "graphtheoryprop"} <= set(documented)
    for name, sizes in documented.items():
        dataset = yaml.safe_load((REPO / "conf" / "dataset" / f"{name}.yaml").read_text())
        assert generated_split_sizes(dataset) == sizes, f"docs/datasets_graph.md gives {name} as {sizes}"
