"""Files written whole: the old file or the whole new one, never part of one."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphbench.run.files import is_partial, remove_partial_files, replace_atomically, temporary_name


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


def test_remove_partial_files_removes_temporaries_only(tmp_path: Path) -> None:
    for name in ("results.json", ".results.json.4242.tmp", "last.ckpt.partial", ".notes.tmp", "metrics.csv"):
        (tmp_path / name).write_text("x")
    (tmp_path / "csv").mkdir()
    (tmp_path / "csv" / ".metrics.csv.7.tmp").write_text("x")  # below it: not this call's
    removed = remove_partial_files(tmp_path)
    assert [p.name for p in removed] == [".results.json.4242.tmp", "last.ckpt.partial"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".notes.tmp", "csv", "metrics.csv", "results.json"]
