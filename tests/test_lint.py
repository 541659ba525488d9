"""The code passes the project's linter and formatter (ruff, configured in pyproject.toml), as CI
checks through the README's test command."""

from __future__ import annotations

import subprocess
import sys

from tests.paths import REPO


def ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args], cwd=REPO, capture_output=True, text=True, timeout=300, check=False
    )


def test_ruff_lint_and_format_are_clean() -> None:
    lint = ruff("check", "--output-format", "concise", ".")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = ruff("format", "--check", ".")
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
