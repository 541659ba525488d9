"""Files written whole: the old file or the whole new one, never part of one."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphbench.run.files import is_partial, replace_atomically, temporary_name


def test_replace_atomically_writes_the_whole_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "metrics.csv"
    target.write_text("old\n")
    replace_atomically(target, lambda tmp: tmp.write_text("a,b\n1,2\n"))
    assert target.read_text() == "a,b\n1,2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.csv"]


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "metrics.csv"
    target.write_text("old\n")

    def half_then_fail(tmp: Path) -> None:
        tmp.write_text("a,b\n1,")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        replace_atomically(target, half_then_fail)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.csv"]


def test_temporary_files_are_partial_and_targets_are_not(tmp_path: Path) -> None:
    assert is_partial(temporary_name(tmp_path / "results.json"))
    assert is_partial(tmp_path / "last.ckpt.partial")
    assert not is_partial(tmp_path / "results.json") and not is_partial(tmp_path / "metrics.csv")
