from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from graphbench.datamodules.raw_files import RawFile, ensure_raw_files, load_numpy_pickle, md5sum
from graphbench.errors import DataError


def test_missing_files_are_all_named_with_their_place(tmp_path: Path) -> None:
    files = [RawFile("x/a.csv.gz", url="https://example.org/a"), RawFile("x/b.pickle")]
    with pytest.raises(DataError) as err:
        ensure_raw_files(tmp_path, files, "Toy", download=False)
    message = str(err.value)
    assert str(tmp_path / "x/a.csv.gz") in message and str(tmp_path / "x/b.pickle") in message
    assert "https://example.org/a" in message and "paths.data_dir" in message


def test_md5_mismatch_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes(b"corrupted")
    with pytest.raises(DataError, match="corrupted or not the official file"):
        ensure_raw_files(tmp_path, [RawFile("a.bin", md5="0" * 32)], "Toy", download=False)


def test_md5_match_passes(tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes(b"fine")
    ensure_raw_files(tmp_path, [RawFile("a.bin", md5=md5sum(tmp_path / "a.bin"))], "Toy", download=False)


def test_unpickler_accepts_numpy_arrays(tmp_path: Path) -> None:
    path = tmp_path / "split.pickle"
    path.write_bytes(pickle.dumps({"train": np.arange(3), "val": np.array([3]), "test": np.array([4])}))
    loaded = load_numpy_pickle(path)
    assert loaded["train"].tolist() == [0, 1, 2]


class Evil:
    def __reduce__(self):  # noqa: D105
        return (print, ("pwned",))


def test_unpickler_refuses_arbitrary_objects(tmp_path: Path) -> None:
    path = tmp_path / "evil.pickle"
    path.write_bytes(pickle.dumps({"train": Evil()}))
    with pytest.raises(DataError, match="refusing to unpickle builtins.print"):
        load_numpy_pickle(path)
