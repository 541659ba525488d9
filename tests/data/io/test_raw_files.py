from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from graphbench.data.io import raw_files
from graphbench.data.io.raw_files import RawFile, ensure_raw_files, md5sum
from graphbench.data.io.safe_load import load_numpy_pickle
from graphbench.vocabulary.errors import ConfigError, DataError


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
    def __reduce__(self):
        return (print, ("pwned",))


def test_unpickler_refuses_arbitrary_objects(tmp_path: Path) -> None:
    path = tmp_path / "evil.pickle"
    path.write_bytes(pickle.dumps({"train": Evil()}))
    with pytest.raises(DataError, match=r"refusing to unpickle builtins.print"):
        load_numpy_pickle(path)


def test_no_download_unless_asked(tmp_path: Path) -> None:
    """Raw data is only read from the data root; a download needs dataset.download=true."""
    source = tmp_path / "official.txt"
    source.write_bytes(b"official")
    root = tmp_path / "root"
    files = [RawFile("x/a.txt", url=source.as_uri())]
    with pytest.raises(DataError) as err:
        ensure_raw_files(root, files, "Toy", download=False)
    assert not root.exists()
    assert str(err.value).endswith(
        f"With dataset.download=true, the files with an official URL would be fetched into {root.resolve()} (it must be writable)."
    )
    assert ensure_raw_files(root, files, "Toy", download=True) == [root / "x/a.txt"]
    assert (root / "x/a.txt").read_bytes() == b"official"


def test_no_download_into_a_data_root_that_is_not_writable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Root ignores permission bits, so the access check itself is made to say no (as on a read-only mount)."""
    source = tmp_path / "official.txt"
    source.write_bytes(b"official")
    monkeypatch.setattr(raw_files.os, "access", lambda path, mode: False)
    with pytest.raises(DataError) as err:
        ensure_raw_files(tmp_path / "root", [RawFile("x/a.txt", url=source.as_uri())], "Toy", download=True)
    assert not (tmp_path / "root").exists()
    assert str(err.value).endswith(
        f"dataset.download=true cannot fetch them: the data root {(tmp_path / 'root').resolve()} is not writable."
    )


def test_files_without_a_url_get_no_download_hint(tmp_path: Path) -> None:
    with pytest.raises(DataError) as err:
        ensure_raw_files(tmp_path, [RawFile("x/b.pickle")], "Toy", download=False)
    assert "download" not in str(err.value)


def test_data_dir_that_is_a_file_says_so(tmp_path: Path) -> None:
    """A data root that is a file is one line naming the mistake, not a list of missing files and failed downloads."""
    afile = tmp_path / "passwd"
    afile.write_text("root:x:0:0")
    files = [RawFile("x/a.txt", url="https://example.org/a"), RawFile("x/b.txt")]
    with pytest.raises(ConfigError) as err:
        ensure_raw_files(afile, files, "Toy", download=True)
    assert str(err.value) == (
        f"paths.data_dir={afile} is a file, not a directory; "
        "point paths.data_dir (env GRAPHBENCH_DATA) at the folder that holds the raw files"
    )
    with pytest.raises(ConfigError, match=f"is a file, not a directory \\({afile} is a file\\)"):
        ensure_raw_files(afile / "sub", files, "Toy", download=False)


def test_missing_files_message_lists_one_file_per_line(tmp_path: Path) -> None:
    """The message lists one missing file per line under a header that says how many are missing."""
    (tmp_path / "x").mkdir()
    (tmp_path / "x/b.bin").write_bytes(b"")
    files = [RawFile("x/a.bin", url="https://example.org/a"), RawFile("x/b.bin"), RawFile("x/c.bin")]
    with pytest.raises(DataError) as err:
        ensure_raw_files(tmp_path, files, "Toy", download=False)
    assert str(err.value).splitlines() == [
        f"Raw files of Toy not found under data root {tmp_path} (2 of its 3 files are missing):",
        f"  - {tmp_path / 'x/a.bin'}  (official URL: https://example.org/a)",
        f"  - {tmp_path / 'x/c.bin'}",
        "Put the official files there, or point paths.data_dir (env GRAPHBENCH_DATA) at a folder that holds them.",
        f"With dataset.download=true, the files with an official URL would be fetched into {tmp_path} (it must be writable).",
    ]
    with pytest.raises(DataError, match=r"\(none of its 3 files is there\):\n"):
        ensure_raw_files(tmp_path / "empty", files, "Toy", download=False)
