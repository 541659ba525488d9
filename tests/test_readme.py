"""The README's and the docs' commands do what the text beside them says.

Every fenced ```bash block of ``README.md`` and ``docs/*.md`` is one test. Each command of the block is
run as a user runs it (forked from a warm interpreter: tests/warm_python.py), from the repository root,
one after the other, with three changes that keep the repository clean: a ``python run.py`` command
writes its run (or sweep) directory under the test's ``tmp_path``; every other path of a command under
``multirun/``, ``runs/``, ``outputs/`` or ``sweeps/`` is moved there too (so a report reads the sweep
the command before it wrote); processed data is cached in the session's shared cache
(``GRAPHBENCH_CACHE``). A command that ends with a non-zero exit code fails the test.

An HTML comment on the line right above a block says how the test treats it, as ``key=value`` pairs
separated by ``;``:

- ``skip=<reason>``: the block is not run, and the reason is visible in the Markdown source;
- ``slow=<reason>``: the block is marked ``slow``;
- ``append=<overrides>``: fast settings appended to every ``python run.py`` command of the block, or
  ``append=<overrides for the 1st> | <for the 2nd> | ...``, one entry per command;
- ``expect=<claim>``: the figure the text quotes, checked once the block has run:
  ``status completed`` (every ``results.json`` the block wrote), ``<metric> in [<low>, <high>]``
  (every ``results.json``'s metric within the stated range) or ``stdout contains "<text>"``
  (the block's output).

Blocks whose commands read ``../shared/data`` skip, saying so, where the real data root is absent.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.paths import REPO, SHARED_DATA
from tests.warm_python import run_python

#: Markdown files whose ``bash`` blocks are run
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
#: relative output paths a command may name; the test moves them under ``tmp_path``
OUTPUT_PREFIXES = ("multirun/", "runs/", "outputs/", "sweeps/")
#: the README's length limit (a front door; results live in docs/results.md)
README_MAX_LINES = 300
DIRECTIVE = re.compile(r"^<!--\s*readme-test:\s*(?P<body>.*?)\s*-->$")
EXPECT_RANGE = re.compile(r"^(?P<metric>\S+) in \[(?P<low>[-\d.e]+), *(?P<high>[-\d.e]+)\]$")
EXPECT_STDOUT = re.compile(r'^stdout contains "(?P<text>[^"]+)"$')


@dataclass
class Block:
    """One ``bash`` block: where it is, its commands and the directive above it."""

    path: Path
    line: int
    commands: list[str]
    directive: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def parse_directive(line: str, where: str) -> dict[str, str]:
    """``<!-- readme-test: key=value; key=value -->`` as a dict; other lines give an empty one."""
    match = DIRECTIVE.match(line.strip())
    if match is None:
        return {}
    directive = {}
    for pair in filter(None, (part.strip() for part in match["body"].split(";"))):
        key, sep, value = pair.partition("=")
        if not sep or key not in {"skip", "slow", "append", "expect"}:
            raise ValueError(f"{where}: readme-test directive '{pair}' is not key=value with key skip, slow, append or expect")
        directive[key] = value.strip()
    return directive


def bash_blocks(path: Path) -> list[Block]:
    """The ``bash`` blocks of a Markdown file, each command one string (``\\``-continued lines joined)."""
    lines = path.read_text().splitlines()
    blocks = []
    index = 0
    while index < len(lines):
        if lines[index].strip() != "```bash":
            index += 1
            continue
        start = index
        body = []
        index += 1
        while index < len(lines) and lines[index].strip() != "```":
            body.append(lines[index])
            index += 1
        commands = [command.strip() for command in "\n".join(body).replace("\\\n", " ").splitlines()]
        commands = [command for command in commands if command and not command.startswith("#")]
        above = lines[start - 1] if start > 0 else ""
        blocks.append(Block(path, start + 1, commands, parse_directive(above, f"{path.name}:{start + 1}")))
        index += 1
    return blocks


def all_blocks() -> list[Block]:
    return [block for path in DOCUMENTS for block in bash_blocks(path)]


def relocate(token: str, tmp_path: Path) -> str:
    """``token`` (``x`` or ``key=x``) with a relative output path ``x`` moved under ``tmp_path``."""
    key, sep, value = token.rpartition("=")
    if value.startswith(OUTPUT_PREFIXES):
        return f"{key}{sep}{tmp_path / value}"
    return token


def prepare(command: str, append: str, index: int, tmp_path: Path) -> tuple[dict[str, str], list[str]]:
    """The environment assignments and the argument list of one command, as the test runs it."""
    tokens = shlex.split(command, comments=True)
    env = {}
    while tokens and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", tokens[0]):
        key, _, value = tokens.pop(0).partition("=")
        env[key] = value
    if not tokens or tokens[0] != "python":
        raise AssertionError(f"'{command}' is not a python command: mark its block skip=<reason> or make it one")
    args = [sys.executable, *(relocate(token, tmp_path) for token in tokens[1:])]
    args = [arg.replace("../shared/data", str(SHARED_DATA)) for arg in args]
    if args[1] == "run.py":
        multirun = "-m" in args or "--multirun" in args
        dir_key = "hydra.sweep.dir" if multirun else "hydra.run.dir"
        if not any(arg.startswith(f"{dir_key}=") for arg in args):
            args.append(f"{dir_key}={tmp_path / f'command-{index}'}")
        args.extend(shlex.split(append))
    return env, args


def check_expectation(expect: str, output: str, tmp_path: Path) -> None:
    """The claim ``expect`` holds for the block's output and the ``results.json`` files it wrote."""
    records = [json.loads(path.read_text()) for path in sorted(tmp_path.rglob("results.json"))]
    if expect == "status completed":
        assert records, "the block wrote no results.json"
        assert [record["status"] for record in records] == ["completed"] * len(records)
    elif match := EXPECT_RANGE.match(expect):
        assert records, "the block wrote no results.json"
        low, high = float(match["low"]), float(match["high"])
        for record in records:
            value = record["metrics"][match["metric"]]
            assert low - 5e-4 <= value <= high + 5e-4, f"{match['metric']} = {value}, the text says {low}..{high}"
    elif match := EXPECT_STDOUT.match(expect):
        assert match["text"] in output, f"'{match['text']}' not in the output:\n{output[-3000:]}"
    else:
        raise AssertionError(
            f"unknown expect '{expect}': use 'status completed', '<metric> in [a, b]' or 'stdout contains \"...\"'"
        )


def block_param(block: Block) -> object:
    marks = [pytest.mark.slow] if "slow" in block.directive else []
    return pytest.param(block, id=block.name, marks=marks)


@pytest.mark.parametrize("block", [block_param(block) for block in all_blocks()])
def test_commands_do_what_the_text_says(block: Block, tmp_path: Path, shared_cache_dir: Path) -> None:
    if "skip" in block.directive:
        assert block.directive["skip"], f"{block.name}: skip needs a reason"
        pytest.skip(f"not run: {block.directive['skip']}")
    if any("../shared/data" in command for command in block.commands) and not SHARED_DATA.is_dir():
        pytest.skip(f"real data root not found at {SHARED_DATA} (set GRAPHBENCH_SHARED_DATA)")
    appends = [part.strip() for part in block.directive.get("append", "").split("|")]
    if len(appends) not in (1, len(block.commands)):
        raise AssertionError(f"{block.name}: {len(appends)} append entries for {len(block.commands)} commands")
    base_env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true", "HYDRA_FULL_ERROR": "0"}
    base_env["GRAPHBENCH_CACHE"] = str(shared_cache_dir)
    base_env.pop("GRAPHBENCH_DATA", None)
    output = ""
    for index, command in enumerate(block.commands):
        append = appends[index] if len(appends) > 1 else appends[0]
        env, args = prepare(command, append, index, tmp_path)
        proc = run_python(args[1:], REPO, {**base_env, **env}, timeout=900)
        output += proc.stdout + proc.stderr
        assert proc.returncode == 0, (
            f"{block.name}: '{shlex.join(args)}' exited {proc.returncode}:\n{(proc.stdout + proc.stderr)[-3000:]}"
        )
    if "expect" in block.directive:
        check_expectation(block.directive["expect"], output, tmp_path)


def test_readme_is_a_front_door() -> None:
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; at most {README_MAX_LINES} (move results to docs/)"


@pytest.mark.parametrize("group", ["model", "task"])
def test_readme_table_lists_every_option_of(group: str) -> None:
    """The config-group table's row for ``group`` names every YAML of ``conf/<group>/``."""
    rows = [line for line in (REPO / "README.md").read_text().splitlines() if line.startswith(f"| `{group}` |")]
    assert len(rows) == 1, f"README.md needs one table row for the group '{group}'"
    listed = set(re.findall(r"`([^`]+)`", rows[0].split("|")[2]))
    on_disk = {path.stem for path in (REPO / "conf" / group).glob("*.yaml")}
    assert on_disk <= listed, f"README's {group} row misses {sorted(on_disk - listed)}"


def test_directives_are_read(tmp_path: Path) -> None:
    """The parser reads a directive above a block, joins continued lines and drops comment lines."""
    text = '<!-- readme-test: append=a=1 | b=2; expect=stdout contains "x y" -->\n```bash\n# note\npython run.py \\\n    c=3\npython -V\n```\n'
    path = tmp_path / "probe.md"
    path.write_text(text)
    (block,) = bash_blocks(path)
    assert block.commands == ["python run.py      c=3", "python -V"]
    assert block.directive == {"append": "a=1 | b=2", "expect": 'stdout contains "x y"'}
    with pytest.raises(ValueError, match="key skip, slow, append or expect"):
        parse_directive("<!-- readme-test: fast=1 -->", "probe")
