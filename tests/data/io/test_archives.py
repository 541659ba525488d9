"""Raw files published inside zip archives: extraction, zip-slip refusal, and the missing-file message."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from graphbench.data.io.archives import (
    Archive,
    ensure_raw_files_from_archives,
    extract_archive,
)
from graphbench.data.io.raw_files import RawFile
from graphbench.vocabulary.errors import ConfigError, DataError


def test_extracts_the_folder_into_its_place(tmp_path: Path) -> None:
    zip_path = tmp_path / "a.zip"
    with zipfile.ZipFile(zip_path, "w") as zf:
        zf.writestr("molecules/train.pickle", b"t")
        zf.writestr("molecules/sub/val.pickle", b"v")
        zf.writestr("other/x.txt", b"x")
    root = tmp_path / "root"
    extract_archive(zip_path, Archive("https://x/a.zip", "molecules/", "ZINC/raw"), root)
    assert (root / "ZINC/raw/train.pickle").read_bytes() == b"t"
    assert (root / "ZINC/raw/sub/val.pickle").read_bytes() == b"v"
    assert not (root / "ZINC/raw/x.txt").exists() and not list(root.rglob("*.part"))


def test_refuses_members_outside_the_target(tmp_path: Path) -> None:
    zip_path = tmp_path / "a.zip"
    with zipfile.ZipFile(zip_path, "w") as zf:
        zf.writestr("m/../../escape.txt", b"!")
    with pytest.raises(DataError, match="outside"):
        extract_archive(zip_path, Archive("https://x/a.zip", "m/", "D/raw"), tmp_path / "root")
    assert not (tmp_path / "escape.txt").exists()


def test_missing_files_name_each_file_and_the_archive(tmp_path: Path) -> None:
    files = [RawFile("D/raw/a.pickle"), RawFile("D/raw/b.index", url="https://x/b.index")]
    with pytest.raises(DataError) as err:
        ensure_raw_files_from_archives(
            tmp_path, files, "Toy", download=False, archives=[Archive("https://x/d.zip", "d/", "D/raw")]
        )
    message = str(err.value)
    assert str(tmp_path / "D/raw/a.pickle") in message and str(tmp_path / "D/raw/b.index") in message
    assert "https://x/d.zip" in message and "https://x/b.index" in message


def test_present_files_pass(tmp_path: Path) -> None:
    (tmp_path / "D/raw").mkdir(parents=True)
    (tmp_path / "D/raw/a.pickle").write_bytes(b"a")
    paths = ensure_raw_files_from_archives(tmp_path, [RawFile("D/raw/a.pickle")], "Toy", download=False)
    assert paths == [tmp_path / "D/raw/a.pickle"]


def test_download_true_fetches_and_extracts_the_archive(tmp_path: Path) -> None:
    zip_path = tmp_path / "hiv.zip"
    with zipfile.ZipFile(zip_path, "w") as zf:
        zf.writestr("hiv/mapping/mol.csv.gz", b"m")
        zf.writestr("hiv/split/scaffold/train.csv.gz", b"s")
    root = tmp_path / "root"
    archive = Archive(zip_path.as_uri(), "hiv/", "ogbg_molhiv")  # a file:// URL: the download path without a network
    files = [RawFile("ogbg_molhiv/mapping/mol.csv.gz"), RawFile("ogbg_molhiv/split/scaffold/train.csv.gz")]
    paths = ensure_raw_files_from_archives(root, files, "Toy", download=True, archives=[archive])
    assert [p.read_bytes() for p in paths] == [b"m", b"s"]
    assert not list(root.glob(".download-*"))


def test_failed_download_is_reported_with_the_missing_files(tmp_path: Path) -> None:
    archive = Archive((tmp_path / "absent.zip").as_uri(), "d/", "D/raw")
    with pytest.raises(DataError) as err:
        ensure_raw_files_from_archives(tmp_path / "root", [RawFile("D/raw/a.pickle")], "Toy", download=True, archives=[archive])
    assert "D/raw/a.pickle" in str(err.value) and "Archive download failed" in str(err.value)


def test_archive_download_is_offered_not_done_unless_asked(tmp_path: Path) -> None:
    """With download=false (the default) nothing is fetched; the message says what would be."""
    zip_path = tmp_path / "d.zip"
    with zipfile.ZipFile(zip_path, "w") as zf:
        zf.writestr("d/a.pickle", b"a")
    root = tmp_path / "root"
    with pytest.raises(DataError) as err:
        ensure_raw_files_from_archives(
            root, [RawFile("D/raw/a.pickle")], "Toy", download=False, archives=[Archive(zip_path.as_uri(), "d/", "D/raw")]
        )
    assert not root.exists()
    assert str(err.value).endswith(
        "With dataset.download=true, they would be downloaded and unzipped there (the data root must be writable)."
    )


def test_archive_data_dir_that_is_a_file_says_so(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    with pytest.raises(ConfigError, match="is a file, not a directory"):
        ensure_raw_files_from_archives(
            tmp_path / "afile",
            [RawFile("D/raw/a.pickle")],
            "Toy",
            download=True,
            archives=[Archive("https://x/d.zip", "d/", "D/raw")],
        )
