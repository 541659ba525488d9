"""``RawRoot``: the one way a source finds its raw files: checked paths in order, every successful call recorded
(and announced), one error naming every missing file."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphbench.data.io.raw_files import RawFile, md5sum
from graphbench.data.io.raw_root import LocateCall, RawRoot
from graphbench.vocabulary.errors import DataError


def test_locate_returns_the_paths_in_order_and_records_the_call(tmp_path: Path) -> None:
    (tmp_path / "toy" / "raw").mkdir(parents=True)
    for name, text in (("a.csv", "1,2\n"), ("b.csv", "3\n")):
        (tmp_path / "toy" / "raw" / name).write_text(text)
    announced: list[int] = []
    root = RawRoot(str(tmp_path), on_located=lambda: announced.append(1))
    files = [RawFile("toy/raw/b.csv", md5=md5sum(tmp_path / "toy" / "raw" / "b.csv")), RawFile("toy/raw/a.csv")]
    assert root.locate(files, "toy") == [tmp_path / "toy" / "raw" / "b.csv", tmp_path / "toy" / "raw" / "a.csv"]
    assert root.located == [LocateCall(tuple(files), "toy")]
    assert announced == [1]
    assert (root.data_dir, root.download) == (tmp_path, False)


def test_missing_files_are_one_error_naming_each_and_nothing_is_recorded(tmp_path: Path) -> None:
    announced: list[int] = []
    root = RawRoot(tmp_path, on_located=lambda: announced.append(1))
    with pytest.raises(DataError) as err:
        root.locate([RawFile("toy/raw/a.csv"), RawFile("toy/raw/b.csv", url="https://example.org/b.csv")], "toy")
    message = str(err.value)
    assert str(tmp_path / "toy" / "raw" / "a.csv") in message and str(tmp_path / "toy" / "raw" / "b.csv") in message
    assert "https://example.org/b.csv" in message
    assert root.located == [] and announced == []


def test_a_wrong_md5_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("changed\n")
    with pytest.raises(DataError, match="MD5"):
        RawRoot(tmp_path).locate([RawFile("a.csv", md5="0" * 32)], "toy")


def test_path_does_not_check_and_roots_compare_by_directory_and_flag(tmp_path: Path) -> None:
    root = RawRoot(tmp_path, download=1)  # type: ignore[arg-type]
    assert root.path("x/y.pt") == tmp_path / "x" / "y.pt" and root.download is True
    assert RawRoot(tmp_path, download=True, on_located=print) == root
    assert RawRoot(tmp_path) != root
